//! Running several replicas behind a proxy: session ids that name their
//! replica (`--replica-id`), and a drain that loses no request already sent
//! (the real binary on 127.0.0.1; nginx itself is in tests/interop/replicas.sh).

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::Duration;

use serde_json::json;
use support::http::HttpWarden;
use support::raw::{initialize_body, meta_2026, post_request_2026, raw_post, request_2026};
use support::{Era, PluginDir, call_params};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn session_ids_name_the_replica_that_holds_them() {
    let dir = PluginDir::with(&["text"]);
    let warden = HttpWarden::start(dir.path(), &["--replica-id", "r7"]).await;
    let response = raw_post(&warden.url).body(initialize_body()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_string();
    assert!(id.starts_with("r7.") && id.len() > 10, "{id}");

    // rmcp's own client works with such ids, calls and all.
    let client = warden.client(Era::Handshake, None).await;
    let result = client
        .call_tool(call_params("text_stats", json!({"text": "one two"})))
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["words"], 2);
    client.cancel().await.unwrap();

    // A session another replica made (a proxy falling back here) is unknown:
    // 404, which tells a client to start a new session.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let elsewhere = raw_post(&warden.url)
        .header("mcp-session-id", "r8.6a7e2c4e-0b1f-4a51-9d0e-3c8f2b7d9a10")
        .header("mcp-protocol-version", "2025-11-25")
        .body(list)
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404, "{}", warden.log());
}

#[tokio::test]
async fn a_replica_id_must_be_short_and_plain() {
    for bad in ["R1", "r.1", "r_1", "-r1", &"r".repeat(33)] {
        let flag = format!("--replica-id={bad}");
        let output = support::warden()
            .args(["serve", "--http", "127.0.0.1:0", "--no-watch", &flag])
            .output()
            .await
            .unwrap();
        assert!(!output.status.success(), "{bad:?} was accepted");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("a replica id is 1 to 32 characters"),
            "{bad:?}: {stderr}"
        );
    }
}

/// One raw HTTP/1.1 request on `stream`; returns the whole answer (the
/// server closes the connection after it while draining).
async fn exchange(stream: &mut tokio::net::TcpStream, request: String) -> String {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer))
        .await
        .expect("the answer came, and the connection closed")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

fn echo_request(addr: &str) -> String {
    let body = request_2026(
        9,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "sent before the drain"}}),
        "raw",
    );
    post_request_2026(addr, "tools/call", "mcp-name: echo\r\n", &body)
}

/// What a proxy in front needs: once SIGTERM arrives, new connections are
/// refused (the proxy tries another replica: nothing was sent), while a
/// request on a connection Warden had already accepted is served, not
/// refused (a proxy does not resend a POST it has sent). `/readyz` says 503
/// to whoever still reaches it, and the process exits 0 once calls finish.
#[tokio::test]
async fn a_drain_serves_what_was_sent_and_refuses_new_connections() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut warden = HttpWarden::start(dir.path(), &[]).await;
    let addr = warden.addr();
    let client = warden.client(Era::Stateless, None).await;
    let slow = client.call_tool(call_params("sleep", json!({"ms": 1500})));
    let pid = warden.pid() as i32;
    let during = async {
        // Connections a proxy opened just before the signal.
        let mut for_call = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let mut for_ready = tokio::net::TcpStream::connect(&addr).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc_kill(pid, 15) }, 0);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            tokio::net::TcpStream::connect(&addr).await.is_err(),
            "a new connection was accepted after SIGTERM"
        );
        // Both at once: each connection is closed after its answer.
        tokio::join!(
            exchange(&mut for_ready, format!("GET /readyz HTTP/1.1\r\nhost: {addr}\r\n\r\n")),
            exchange(&mut for_call, echo_request(&addr)),
        )
    };
    let (result, (ready, called)) = tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(slow, during) })
        .await
        .unwrap_or_else(|_| panic!("the drain did not finish:\n{}", warden.log()));
    assert_eq!(support::text(&result.unwrap()), "slept");
    assert!(
        ready.starts_with("HTTP/1.1 503"),
        "{ready:?} {called:?}\n{}",
        warden.log()
    );
    assert!(ready.contains(r#"{"ready":false}"#), "{ready}");
    assert!(called.starts_with("HTTP/1.1 200"), "{called}");
    assert!(called.contains("sent before the drain"), "{called}");
    let status = tokio::time::timeout(Duration::from_secs(20), warden.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}\n{}", warden.log());
}

/// Draining with tasks: after SIGTERM a replica takes no new task — a call to a tool that is
/// only ever a task, on a connection it had accepted before, is refused with the reason — while
/// the task it runs finishes within `--shutdown-grace`: `completed`, not marked `failed`.
#[tokio::test]
async fn a_draining_replica_refuses_new_tasks_and_lets_running_ones_finish() {
    // The plugin declares `slow_compute` optional and `failing_job` required.
    let dir = PluginDir::with(&["conformance-interactive"]);
    let audit_file = tempfile::NamedTempFile::new().unwrap();
    let audit = audit_file.path().to_str().unwrap().to_string();
    let mut warden = HttpWarden::start(dir.path(), &["--shutdown-grace", "20s", "--audit-log", &audit]).await;
    let addr = warden.addr();
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let running = json!({"name": "slow_compute", "arguments": {"seconds": 2, "label": "drained"}});
    let (_, created) = warden.post_2026(None, "tools/call", running, tasks.clone()).await;
    assert!(created["result"]["taskId"].is_string(), "{created}");

    let mut for_call = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // SAFETY: sending a signal to our own child process.
    assert_eq!(unsafe { libc_kill(warden.pid() as i32, 15) }, 0);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut params = json!({"name": "failing_job", "arguments": {}});
    params["_meta"] = meta_2026("raw", tasks);
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}).to_string();
    let refused = exchange(
        &mut for_call,
        post_request_2026(&addr, "tools/call", "mcp-name: failing_job\r\n", &body),
    )
    .await;
    assert!(refused.starts_with("HTTP/1.1 200"), "{refused}");
    assert!(
        refused.contains(
            r#""error":{"code":-32603,"message":"this Warden is shutting down and takes no new tasks; call again"}"#
        ),
        "{refused}\n{}",
        warden.log()
    );

    let status = tokio::time::timeout(Duration::from_secs(30), warden.child.wait())
        .await
        .unwrap_or_else(|_| panic!("the drain did not finish:\n{}", warden.log()))
        .unwrap();
    assert!(status.success(), "{status:?}\n{}", warden.log());
    let records = support::attacks::audit_lines(std::path::Path::new(&audit));
    let events: Vec<(&str, &str)> = records
        .iter()
        .filter_map(|r| Some((r["tool"].as_str()?, r["task_event"].as_str()?)))
        .collect();
    assert_eq!(
        events,
        [("slow_compute", "created"), ("slow_compute", "completed")],
        "{records:?}"
    );
    let calls: Vec<&serde_json::Value> = records.iter().filter(|r| r.get("outcome").is_some()).collect();
    assert_eq!(calls.len(), 1, "the refused call never ran: {records:?}");
    assert_eq!(calls[0]["target"], "slow_compute");
    assert_eq!(calls[0]["outcome"], "ok", "{:?}", calls[0]);
    assert!(!warden.log().contains("marked failed"), "{}", warden.log());
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}
