//! What every hostile-plugin test does around an attack: call it, check it
//! failed (or worked), then call a healthy plugin — the `text` example —
//! which must still answer exactly.

use serde_json::{Value, json};

use super::{Server, is_error, text};

/// The healthy plugin answers exactly.
pub async fn healthy(server: &Server) {
    let result = server.call("text_stats", json!({"text": "still fine"})).await;
    assert!(!is_error(&result), "the healthy plugin must keep working: {result:?}");
    assert_eq!(result.structured_content.unwrap()["words"], 2);
}

/// Calls a tool that must fail, then the healthy plugin; returns the error text.
pub async fn refused(server: &Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments.clone()).await;
    assert!(is_error(&result), "{tool} {arguments} should have failed: {result:?}");
    healthy(server).await;
    text(&result)
}

/// Calls a tool that must work; returns its text.
pub async fn allowed(server: &Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments.clone()).await;
    assert!(!is_error(&result), "{tool} {arguments} should have worked: {result:?}");
    text(&result)
}

/// The records of an audit log.
pub fn audit_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Calls `misbehave`'s `remember` many times, one after another and four
/// at once, so pooled slots are reused: each call must find nothing an
/// earlier call left in memory.
pub async fn assert_calls_remember_nothing(server: &Server) {
    for round in 0..20 {
        let result = server
            .call("remember", json!({ "text": format!("secret-{round}") }))
            .await;
        assert_eq!(text(&result), "", "round {round}: a fresh instance remembers nothing");
    }
    for round in 0..4 {
        let call = |i: usize| server.call("remember", json!({ "text": format!("concurrent-{round}-{i}") }));
        let (a, b, c, d) = tokio::join!(call(0), call(1), call(2), call(3));
        for result in [a, b, c, d] {
            assert_eq!(text(&result), "", "round {round}: concurrent calls share nothing");
        }
    }
}

/// `count` connections to `addr` (127.0.0.1), opened one after another, each
/// sending half a request head and then nothing: the idle flood of issue 21.
/// A connection the server closes is kept too (its end reads EOF).
pub async fn half_open_connections(addr: &str, count: usize) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    assert!(addr.starts_with("127.0.0.1:"), "attacks stay on loopback: {addr}");
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        // A write to a connection already shed may fail; that is the point.
        let _ = stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad")
            .await;
        held.push(stream);
    }
    held
}
