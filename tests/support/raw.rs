//! Raw MCP requests over HTTP, for the edges rmcp's client never reaches:
//! bodies and headers as a minimal (or hostile) client writes them, and the
//! JSON-RPC answer read back out of a JSON or SSE response.

use serde_json::{Value, json};

/// The `_meta` a 2026-07-28 request carries (the era has no handshake):
/// protocol version, the client's name and its capabilities.
pub fn meta_2026(client: &str, capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 JSON-RPC request from client `client` with no capabilities:
/// `params` with its `_meta` added.
pub fn request_2026(id: u64, method: &str, mut params: Value, client: &str) -> String {
    params["_meta"] = meta_2026(client, json!({}));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2025-11-25 `initialize` request (id 1), which opens a session.
pub fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

/// A JSON-RPC POST to `url` on `http`, accepting JSON or SSE as the
/// transport requires; headers and body are the caller's.
pub fn post(http: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

/// [`post`] on a client of its own (a connection of its own, too).
pub fn raw_post(url: &str) -> reqwest::RequestBuilder {
    post(&reqwest::Client::new(), url)
}

/// The JSON messages of a response body: each SSE `data:` line, then the
/// body itself (a plain JSON answer).
fn messages(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
}

/// The message answering request `id`, from a JSON or SSE response body.
pub fn answer(text: &str, id: u64) -> Option<Value> {
    messages(text).find(|message| message["id"] == id)
}

/// The first JSON-RPC message of a JSON or SSE response body.
pub fn first_message(text: &str) -> Option<Value> {
    messages(text).next()
}

/// The head of a raw HTTP/1.1 2026-07-28 `POST /mcp` to `host` for `method`
/// whose body is `content_length` bytes; `extra` holds further header lines,
/// each ending in `\r\n`.
pub fn post_head_2026(host: &str, method: &str, extra: &str, content_length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: {method}\r\n{extra}content-length: {content_length}\r\n\r\n"
    )
}

/// A whole raw HTTP/1.1 2026-07-28 `POST /mcp`: [`post_head_2026`], then `body`.
pub fn post_request_2026(host: &str, method: &str, extra: &str, body: &str) -> String {
    format!("{}{body}", post_head_2026(host, method, extra, body.len()))
}

/// Opens a 2025-11-25 session at `url` with a raw `initialize` (and the
/// `initialized` notification after it); its id, or the refusal's status
/// and body.
pub async fn open_session(http: &reqwest::Client, url: &str) -> Result<String, (u16, String)> {
    let response = post(http, url).body(initialize_body()).send().await.unwrap();
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = response.text().await.unwrap();
    match id {
        Some(id) if status == 200 => {
            let initialized = post(http, url)
                .header("mcp-session-id", &id)
                .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(initialized.status(), 202);
            Ok(id)
        }
        _ => Err((status, text)),
    }
}
