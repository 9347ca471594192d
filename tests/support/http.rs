//! A `warden serve --http` process for the HTTP tests, and what they
//! measure of it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};

use super::{Era, Recorder};

/// A running `warden serve --http 127.0.0.1:0 …`, its address read from its log.
pub struct HttpWarden {
    pub child: tokio::process::Child,
    pub url: String,
    log: tempfile::NamedTempFile,
}

impl HttpWarden {
    pub async fn start(dir: &std::path::Path, extra: &[&str]) -> Self {
        Self::start_with(dir, extra, Stdio::null()).await
    }

    pub async fn start_with(dir: &std::path::Path, extra: &[&str], stdin: Stdio) -> Self {
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = super::warden()
            .args(["serve", "--http", "127.0.0.1:0", "--plugins"])
            .arg(dir)
            .args(extra)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.reopen().unwrap()))
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            let text = std::fs::read_to_string(log.path()).unwrap();
            if let Some(at) = text.find("serving MCP over HTTP at ") {
                let url = text[at + "serving MCP over HTTP at ".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap();
                return Self {
                    child,
                    url: url.to_string(),
                    log,
                };
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "warden did not start:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap()
    }

    pub async fn client(&self, era: Era, token: Option<&str>) -> RunningService<RoleClient, Recorder> {
        self.client_recording(era, token, Recorder::default()).await
    }

    /// A client whose notifications land in `recorder`.
    pub async fn client_recording(
        &self,
        era: Era,
        token: Option<&str>,
        recorder: Recorder,
    ) -> RunningService<RoleClient, Recorder> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let lifecycle = match era {
            Era::Handshake => ClientLifecycleMode::Initialize,
            Era::Stateless => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        recorder
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .unwrap_or_else(|e| panic!("cannot connect over HTTP ({era:?}): {e}\n{}", self.log()))
    }

    /// Posts one 2026-07-28 request raw, as a client sends it (with `token`
    /// as its bearer token, if any): the HTTP status and the JSON-RPC answer.
    pub async fn post_2026(
        &self,
        token: Option<&str>,
        method: &str,
        mut params: serde_json::Value,
        capabilities: serde_json::Value,
    ) -> (u16, serde_json::Value) {
        params["_meta"] = super::raw::meta_2026("raw", capabilities);
        let mut request = super::raw::raw_post(&self.url)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = params["name"]
            .as_str()
            .or(params["uri"].as_str())
            .or(params["taskId"].as_str())
        {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let response = request.body(body).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let message = super::raw::answer(&text, 1).unwrap_or_else(|| panic!("no answer in {text}"));
        (status, message)
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    /// `http://127.0.0.1:PORT`, without the `/mcp`.
    pub fn base(&self) -> String {
        self.url.trim_end_matches("/mcp").to_string()
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        self.base().trim_start_matches("http://").to_string()
    }

    /// How many file descriptors the process holds now.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid())).unwrap().count()
    }

    /// Waits (up to `LONG_WAIT`) until the process holds at most `bound`
    /// file descriptors; returns how many it holds.
    pub async fn wait_for_fds_at_most(&self, bound: usize) -> usize {
        let started = Instant::now();
        loop {
            let open = self.open_fds();
            if open <= bound {
                return open;
            }
            assert!(
                started.elapsed() < super::LONG_WAIT,
                "the process still holds {open} file descriptors, more than {bound}:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
