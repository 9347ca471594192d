//! The stdio wire itself, byte for byte: malformed input, notifications and
//! end of input.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::PluginDir;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    fn start(dir: &std::path::Path) -> Self {
        let mut child = support::warden()
            .arg("serve")
            .arg("--plugins")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, stdin, stdout }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.stdout.next_line())
            .await
            .expect("a reply in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    async fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        )
        .await;
        let reply = self.read().await;
        assert_eq!(reply["id"], 1);
        assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
    }
}

#[tokio::test]
async fn malformed_json_gets_parse_error_and_serving_continues() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut raw = Raw::start(dir.path());
    raw.send("{this is not json").await;
    let reply = raw.read().await;
    assert_eq!(reply["error"]["code"], -32700);
    assert_eq!(reply["id"], Value::Null);
    raw.initialize().await;
    raw.send("[]").await;
    assert_eq!(raw.read().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}"#)
        .await;
    let reply = raw.read().await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!(9), json!(-32602))
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}"#)
        .await;
    let reply = raw.read().await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "ok");
}

#[tokio::test]
async fn notifications_get_no_reply() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut raw = Raw::start(dir.path());
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).await;
    // The next line on stdout answers the ping: nothing answered the notifications.
    let reply = raw.read().await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
}

#[tokio::test]
async fn end_of_input_ends_the_process_with_success() {
    let dir = PluginDir::with(&["misbehave"]);
    for initialize_first in [false, true] {
        let mut raw = Raw::start(dir.path());
        if initialize_first {
            raw.initialize().await;
        }
        drop(raw.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), raw.child.wait())
            .await
            .expect("warden exits promptly at end of input")
            .unwrap();
        assert!(status.success(), "{status:?}");
    }
}

#[tokio::test]
async fn the_stateless_wire_needs_no_handshake() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut raw = Raw::start(dir.path());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}).to_string())
        .await;
    let reply = raw.read().await;
    assert!(
        reply["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{reply}"
    );
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "stateless"}, "_meta": meta}})
        .to_string(),
    )
    .await;
    let reply = raw.read().await;
    assert_eq!(reply["result"]["content"][0]["text"], "stateless", "{reply}");
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
}

#[tokio::test]
async fn progress_is_sent_only_when_asked_for_and_never_after_the_result() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut raw = Raw::start(dir.path());
    raw.initialize().await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","arguments":{}}}"#)
        .await;
    let reply = raw.read().await;
    assert_eq!(reply["id"], 2, "no progress without a progressToken: {reply}");
    raw.send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p"}}}"#,
    )
    .await;
    let mut seen = Vec::new();
    loop {
        let message = raw.read().await;
        if message.get("id").is_some() {
            assert_eq!(message["result"]["content"][0]["text"], "done");
            break;
        }
        assert_eq!(message["method"], "notifications/progress");
        assert_eq!(message["params"]["progressToken"], "p");
        seen.push(message["params"]["progress"].as_f64().unwrap());
    }
    assert_eq!(seen, [0.0, 50.0, 100.0]);
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).await;
    assert_eq!(raw.read().await["id"], 4, "nothing arrives after the result");
}
