//! Shared helpers for the integration tests: build the guest plugins once,
//! lay out plugin folders, start the real `warden` binary and connect to it.

#![allow(dead_code)]
// MCP logging is deprecated (SEP-2577) but still part of both wires Warden serves.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::NotificationContext;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;

/// Every guest plugin (examples and test-only ones), built once per test
/// binary: package name → component path.
pub fn guests() -> &'static HashMap<String, PathBuf> {
    static GUESTS: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    GUESTS.get_or_init(|| {
        let root = xtask::repo_root();
        let mut all = HashMap::new();
        for workspace in ["plugins", "tests/plugins"] {
            for guest in xtask::build_guests(&root.join(workspace)).expect("the guest plugins build") {
                all.insert(guest.name, guest.wasm);
            }
        }
        all
    })
}

pub fn guest(name: &str) -> &'static Path {
    guests()
        .get(name)
        .unwrap_or_else(|| panic!("no guest plugin named {name}"))
}

/// A temporary plugins folder.
pub struct PluginDir {
    dir: tempfile::TempDir,
}

impl PluginDir {
    pub fn new() -> Self {
        Self {
            dir: tempfile::Builder::new().prefix("warden-plugins-").tempdir().unwrap(),
        }
    }

    /// A folder holding the given guests under their own names.
    pub fn with(names: &[&str]) -> Self {
        let dir = Self::new();
        for name in names {
            dir.add(name, name);
        }
        dir
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies guest `name` in as `file_stem.wasm`.
    pub fn add(&self, name: &str, file_stem: &str) -> &Self {
        std::fs::copy(guest(name), self.path().join(format!("{file_stem}.wasm"))).unwrap();
        self
    }

    pub fn write(&self, file: &str, contents: impl AsRef<[u8]>) -> &Self {
        std::fs::write(self.path().join(file), contents).unwrap();
        self
    }
}

/// Which protocol era a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 with the `initialize` handshake.
    Handshake,
    /// 2026-07-28: `server/discover` and per-request metadata.
    Stateless,
}

pub const ERAS: [Era; 2] = [Era::Handshake, Era::Stateless];

/// A client handler that records the notifications the server sends, as
/// `(method, params)` pairs in arrival order.
#[derive(Clone, Default)]
pub struct Recorder {
    pub seen: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
}

impl Recorder {
    fn push(&self, method: &str, params: impl serde::Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.seen.lock().unwrap().push((method.to_string(), params));
    }

    pub fn take(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl rmcp::ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.push("notifications/progress", params);
    }

    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _: NotificationContext<RoleClient>) {
        self.push("notifications/message", params);
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.push("notifications/tools/list_changed", Value::Null);
    }
}

pub struct Server {
    pub client: RunningService<RoleClient, Recorder>,
    pub recorder: Recorder,
    pub stderr: tempfile::NamedTempFile,
}

impl Server {
    /// What the server has logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap()
    }

    /// Disconnects, and returns everything the server logged.
    pub async fn stop(self) -> String {
        self.client.cancel().await.unwrap();
        std::fs::read_to_string(self.stderr.path()).unwrap()
    }

    pub async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        self.try_call(name, arguments).await.expect("the call gets a result")
    }

    pub async fn try_call(&self, name: &str, arguments: Value) -> Result<CallToolResult, rmcp::ServiceError> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments))
            .await
    }

    pub async fn tool_names(&self) -> Vec<String> {
        let tools = self.client.list_all_tools().await.expect("tools/list works");
        tools.into_iter().map(|t| t.name.to_string()).collect()
    }
}

pub fn warden() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_warden"))
}

/// Starts `warden serve --plugins DIR ARGS…` and connects in the given era.
pub async fn serve(dir: &Path, era: Era, args: &[&str]) -> Server {
    serve_command(warden(), dir, era, args, tempfile::NamedTempFile::new().unwrap()).await
}

/// Like `serve`, from a prepared command (extra environment, say).
pub async fn serve_command(
    mut command: tokio::process::Command,
    dir: &Path,
    era: Era,
    args: &[&str],
    stderr: tempfile::NamedTempFile,
) -> Server {
    command.arg("serve").arg("--plugins").arg(dir).args(args);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::from(stderr.reopen().unwrap()))
        .spawn()
        .expect("warden starts");
    let lifecycle = match era {
        Era::Handshake => ClientLifecycleMode::Initialize,
        Era::Stateless => ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    };
    let recorder = Recorder::default();
    let client = match recorder.clone().serve_with_lifecycle(transport, lifecycle).await {
        Ok(client) => client,
        Err(error) => panic!(
            "cannot connect ({era:?}): {error}\nserver log:\n{}",
            std::fs::read_to_string(stderr.path()).unwrap()
        ),
    };
    Server {
        client,
        recorder,
        stderr,
    }
}

/// The text of a result's only text block.
pub fn text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .collect();
    assert_eq!(texts.len(), 1, "expected one text block in {result:?}");
    texts[0].to_string()
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

/// A tiny HTTP/1.1 server: `/hello` answers "hello", `/big` 4096 bytes.
/// It counts connections, so a test can prove a refused request never left.
pub struct TestHttp {
    pub port: u16,
    pub connections: Arc<AtomicUsize>,
}

pub async fn http_server() -> TestHttp {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&request);
                let body = if head.starts_with("GET /big ") {
                    "y".repeat(4096)
                } else {
                    "hello".to_string()
                };
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    TestHttp { port, connections }
}
