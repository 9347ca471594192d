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
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::NotificationContext;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::Value;

pub mod attacks;
pub mod components;
pub mod http;
pub mod namespaces;
pub mod oauth;
pub mod raw;

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

    /// Puts `contents` at `file` the way a careful deployer does: written
    /// beside it under a hidden name, then renamed into place.
    pub fn replace(&self, file: &str, contents: impl AsRef<[u8]>) -> &Self {
        let target = self.path().join(file);
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        let temporary = target.with_file_name(format!(".{name}.tmp"));
        std::fs::write(&temporary, contents).unwrap();
        std::fs::rename(&temporary, &target).unwrap();
        self
    }

    pub fn write(&self, file: &str, contents: impl AsRef<[u8]>) -> &Self {
        std::fs::write(self.path().join(file), contents).unwrap();
        self
    }
}

/// How long tests wait for something asynchronous (a reload, a
/// notification): generous, for a loaded 2-core machine.
pub const LONG_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

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
    pub fn push(&self, method: &str, params: impl serde::Serialize) {
        let params = serde_json::to_value(params).unwrap();
        self.seen.lock().unwrap().push((method.to_string(), params));
    }

    pub fn take(&self) -> Vec<(String, Value)> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    /// How many `method` notifications have arrived so far.
    pub fn count(&self, method: &str) -> usize {
        self.seen.lock().unwrap().iter().filter(|(m, _)| m == method).count()
    }

    /// The params of the `method` notifications so far, in arrival order
    /// (left recorded).
    pub fn params_of(&self, method: &str) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, params)| params.clone())
            .collect()
    }

    /// Waits (up to `LONG_WAIT`) until `count` `method` notifications have
    /// arrived — the client may handle a notification sent just before a
    /// result only after it returns that result — then takes them all.
    pub async fn take_at_least(&self, method: &str, count: usize) -> Vec<Value> {
        let started = std::time::Instant::now();
        while started.elapsed() < LONG_WAIT {
            if self.count(method) >= count {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.take()
            .into_iter()
            .filter(|(m, _)| m == method)
            .map(|(_, params)| params)
            .collect()
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

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.push("notifications/resources/updated", params);
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.push("notifications/resources/list_changed", Value::Null);
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.push("notifications/prompts/list_changed", Value::Null);
    }
}

pub struct Server {
    pub client: RunningService<RoleClient, Recorder>,
    pub recorder: Recorder,
    pub stderr: tempfile::NamedTempFile,
    /// The warden process.
    pub pid: u32,
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
        self.client.call_tool(call_params(name, arguments)).await
    }

    /// In the 2026-07-28 era list changes arrive only on a
    /// `subscriptions/listen` stream: open one and record what it carries,
    /// as a handshake-era session records them from its peer.
    async fn listen_for_list_changes(&self) {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = self
            .client
            .listen(filter)
            .await
            .expect("subscriptions/listen is acknowledged");
        let recorder = self.recorder.clone();
        tokio::spawn(async move {
            while let Ok(Some(notification)) = subscription.next().await {
                if let ServerNotification::ToolListChangedNotification(_) = notification {
                    recorder.push("notifications/tools/list_changed", Value::Null);
                }
            }
        });
    }

    /// How many `tools/list_changed` notifications arrived so far.
    pub fn list_changes(&self) -> usize {
        self.recorder.count("notifications/tools/list_changed")
    }

    /// Waits (up to `LONG_WAIT`) until more than `seen` `tools/list_changed`
    /// notifications have arrived; returns the new count.
    pub async fn wait_for_list_change(&self, seen: usize) -> usize {
        self.wait_for_list_change_within(seen, LONG_WAIT).await
    }

    pub async fn wait_for_list_change_within(&self, seen: usize, timeout: std::time::Duration) -> usize {
        self.wait_until_within("a tools/list_changed notification", timeout, || {
            let now = self.list_changes();
            (now > seen).then_some(now)
        })
        .await
    }

    /// Waits (up to `LONG_WAIT`) until the server's log contains `needle`.
    pub async fn wait_for_log(&self, needle: &str) {
        self.wait_until(&format!("the log line {needle:?}"), || {
            self.log().contains(needle).then_some(())
        })
        .await
    }

    /// Polls `check` every 20 ms until it answers, for up to `LONG_WAIT`.
    pub async fn wait_until<T>(&self, what: &str, check: impl FnMut() -> Option<T>) -> T {
        self.wait_until_within(what, LONG_WAIT, check).await
    }

    pub async fn wait_until_within<T>(
        &self,
        what: &str,
        timeout: std::time::Duration,
        mut check: impl FnMut() -> Option<T>,
    ) -> T {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(value) = check() {
                return value;
            }
            if std::time::Instant::now() > deadline {
                panic!("no {what} within {timeout:?}; server log:\n{}", self.log());
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub async fn tool_names(&self) -> Vec<String> {
        let tools = self.client.list_all_tools().await.expect("tools/list works");
        tools.into_iter().map(|t| t.name.to_string()).collect()
    }
}

/// The `warden` binary, with its default compiled-code cache inside the
/// target folder rather than the user's: tests stay hermetic.
pub fn warden() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    command.env(
        "XDG_CACHE_HOME",
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("warden-test-cache"),
    );
    command
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
    connect(command, era, stderr).await
}

/// Starts a prepared `warden` command and connects to it in the given era.
pub async fn connect(command: tokio::process::Command, era: Era, stderr: tempfile::NamedTempFile) -> Server {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::from(stderr.reopen().unwrap()))
        .spawn()
        .expect("warden starts");
    let pid = transport.id().expect("warden is running");
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
    let server = Server {
        client,
        recorder,
        stderr,
        pid,
    };
    if era == Era::Stateless {
        server.listen_for_list_changes().await;
    }
    // The handshake is answered while plugins load; a list waits for the
    // first load, so a test starts from a loaded server, as before.
    if let Err(error) = server.client.list_all_tools().await {
        panic!(
            "the first tools/list failed ({era:?}): {error}\nserver log:\n{}",
            std::fs::read_to_string(server.stderr.path()).unwrap()
        );
    }
    server
}

/// The text of a result's only text block.
/// A `tools/call` of `tool` with `arguments`, a JSON object.
pub fn call_params(tool: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(tool.to_string()).with_arguments(arguments)
}

/// Calls `tool` on `client`, which must answer with a result.
pub async fn call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    arguments: Value,
) -> CallToolResult {
    client.call_tool(call_params(tool, arguments)).await.unwrap()
}

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

/// The open file descriptors of a process.
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |fds| fds.count())
}

/// A field of /proc/PID/status in KiB (`VmRSS`, `VmHWM`).
pub fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
