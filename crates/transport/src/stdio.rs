//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! rmcp's own stdio transport silently skips unparsable lines; JSON-RPC
//! asks for a `-32700` reply, which tells a client author what went wrong.
//! This transport gives that reply and keeps serving. Lines are bounded so
//! a peer that never sends a newline cannot exhaust memory.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::Mutex;

/// The longest message accepted on one line.
pub const MAX_LINE_BYTES: usize = 16 << 20;

pub struct StdioTransport<R, W> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Set while skipping the rest of an over-long line.
    discarding: bool,
    /// The longest line accepted, newline included: `MAX_LINE_BYTES` but in tests.
    max_line: usize,
    writer: Arc<Mutex<W>>,
}

type Reader = Box<dyn AsyncRead + Unpin + Send>;
type Writer = Box<dyn AsyncWrite + Unpin + Send>;

impl StdioTransport<Reader, Writer> {
    /// stdin and stdout. When they are pipes — as when an MCP client starts
    /// Warden — the async runtime reads and writes them directly, in
    /// non-blocking mode; otherwise (a terminal, a file) through tokio's
    /// blocking stdio, which hands every read and write to another thread.
    pub fn stdio() -> Self {
        let reader: Reader = match pipe_end(&std::io::stdin()).and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok()) {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdin()),
        };
        let writer: Writer = match pipe_end(&std::io::stdout()).and_then(|fd| pipe::Sender::from_owned_fd(fd).ok()) {
            Some(pipe) => Box::new(pipe),
            None => Box::new(tokio::io::stdout()),
        };
        Self::new(reader, writer)
    }
}

/// A duplicate of `stream`'s descriptor, if it is a pipe (tokio checks that
/// again, and the access mode, before using it).
fn pipe_end(stream: &impl AsFd) -> Option<OwnedFd> {
    let fd = stream.as_fd().try_clone_to_owned().ok()?;
    let is_pipe = std::fs::File::from(fd.try_clone().ok()?)
        .metadata()
        .is_ok_and(|m| m.file_type().is_fifo());
    is_pipe.then_some(fd)
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(reader: R, writer: W) -> Self {
        Self {
            reader: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            max_line: MAX_LINE_BYTES,
            writer: Arc::new(Mutex::new(writer)),
        }
    }

    /// Lowers the line limit, so that tests and the fuzzer reach the
    /// over-long-line path with small inputs.
    pub fn with_max_line_bytes(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// Reads up to the next newline into `self.line`. Cancel-safe: bytes
    /// are consumed only together with their copy into `self.line`, so a
    /// dropped read resumes where it stopped.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len() + take > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(Line::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| Line::Complete)
            };
            self.reader.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }
}

async fn reply<W: AsyncWrite + Unpin + Send>(writer: &Mutex<W>, message: Value) {
    let mut bytes = message.to_string().into_bytes();
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    if writer.write_all(&bytes).await.is_ok() {
        let _ = writer.flush().await;
    }
}

/// Answers a line that is not a valid MCP message, as JSON-RPC says.
async fn reject<W: AsyncWrite + Unpin + Send>(writer: &Mutex<W>, line: &[u8], error: serde_json::Error) {
    {
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(syntax) => {
                tracing::debug!("unparsable line on stdin: {syntax}");
                let message = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("Parse error: {syntax}")}});
                return reply(writer, message).await;
            }
        };
        let id = value.get("id").filter(|id| id.is_string() || id.is_number()).cloned();
        let has_method = value.get("method").is_some_and(Value::is_string);
        let (code, message) = match (&value, has_method) {
            (Value::Array(_), _) => (
                -32600,
                "Invalid Request: JSON-RPC batches are not supported".to_string(),
            ),
            (_, true) if id.is_some() => (-32602, format!("Invalid params: {error}")),
            // A notification we cannot read gets no reply, as JSON-RPC says.
            (_, true) => return tracing::debug!("ignored a malformed notification: {error}"),
            // A response to a request we never sent, or anything else.
            _ if value.get("result").is_some() || value.get("error").is_some() => {
                return tracing::debug!("ignored an unexpected response: {error}");
            }
            _ => (-32600, format!("Invalid Request: {error}")),
        };
        let message = json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null),
            "error": {"code": code, "message": message}});
        reply(writer, message).await;
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut writer = writer.lock().await;
            writer.write_all(&bytes).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(Line::Complete) => {}
                Ok(Line::TooLong) => {
                    let max = self.max_line;
                    tracing::warn!("a message longer than {max} bytes arrived on stdin; discarded");
                    let message = json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32600, "message": format!("Invalid Request: message longer than {max} bytes")}});
                    reply(&self.writer, message).await;
                    continue;
                }
                Ok(Line::Eof) => return None,
                Err(error) => {
                    tracing::error!("cannot read stdin: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let trimmed = trim(&line);
            if !trimmed.is_empty() {
                match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(trimmed) {
                    Ok(JsonRpcMessage::Request(request)) if is_malformed_standard_request(&request.request) => {
                        let ClientRequest::CustomRequest(custom) = &request.request else {
                            unreachable!()
                        };
                        let message = json!({"jsonrpc": "2.0", "id": request.id,
                            "error": {"code": -32602, "message": format!("Invalid params: the params of `{}` do not match the MCP schema", custom.method)}});
                        reply(&self.writer, message).await;
                    }
                    Ok(message) => {
                        self.line = line;
                        self.line.clear();
                        return Some(message);
                    }
                    Err(error) => reject(&self.writer, trimmed, error).await,
                }
            }
            self.line = line;
            self.line.clear();
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

/// rmcp reads a standard method whose params it cannot parse as a custom
/// request, which would be answered "method not found": it is a params error.
fn is_malformed_standard_request(request: &ClientRequest) -> bool {
    const STANDARD: &[&str] = &[
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "subscriptions/listen",
    ];
    matches!(request, ClientRequest::CustomRequest(custom) if STANDARD.contains(&custom.method.as_str()))
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn exchange(input: &'static [u8]) -> (Vec<String>, Vec<String>) {
        let (client, server_out) = tokio::io::duplex(1 << 16);
        let mut transport = StdioTransport::new(input, server_out);
        let mut received = Vec::new();
        while let Some(message) = transport.receive().await {
            received.push(
                serde_json::to_value(&message).unwrap()["method"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        drop(transport);
        let mut replies = String::new();
        let mut client = client;
        client.read_to_string(&mut replies).await.unwrap();
        (received, replies.lines().map(str::to_string).collect())
    }

    #[tokio::test]
    async fn malformed_lines_get_parse_errors_and_serving_continues() {
        let (received, replies) = exchange(b"{oops\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n").await;
        assert_eq!(received, ["ping"]);
        assert_eq!(replies.len(), 1);
        let reply: Value = serde_json::from_str(&replies[0]).unwrap();
        assert_eq!(reply["error"]["code"], -32700);
        assert_eq!(reply["id"], Value::Null);
    }

    #[tokio::test]
    async fn an_over_long_line_gets_one_reply_and_the_next_line_is_read() {
        let ping = |id: u8| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n");
        let input = format!("{}{}\n{}{}", ping(1), "x".repeat(60), ping(2), "y".repeat(60));
        let (client, server_out) = tokio::io::duplex(1 << 16);
        let mut transport = StdioTransport::new(input.as_bytes(), server_out).with_max_line_bytes(50);
        let mut ids = Vec::new();
        while let Some(message) = transport.receive().await {
            ids.push(serde_json::to_value(&message).unwrap()["id"].clone());
        }
        drop(transport);
        let mut replies = String::new();
        let mut client = client;
        client.read_to_string(&mut replies).await.unwrap();
        assert_eq!(ids, [json!(1), json!(2)]);
        // The x line, and the y line cut off by the end of input once it passed the limit.
        let replies: Vec<Value> = replies.lines().map(|r| serde_json::from_str(r).unwrap()).collect();
        assert_eq!(replies.len(), 2, "{replies:?}");
        for reply in replies {
            assert_eq!(reply["error"]["code"], -32600);
            assert_eq!(
                reply["error"]["message"],
                "Invalid Request: message longer than 50 bytes"
            );
        }
    }

    #[tokio::test]
    async fn wrong_shapes_get_invalid_request_or_params() {
        let (received, replies) = exchange(
            b"[1,2]\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":5}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":7}\n",
        )
        .await;
        assert!(received.is_empty(), "{received:?}");
        let codes: Vec<(i64, Value)> = replies
            .iter()
            .map(|r| {
                let v: Value = serde_json::from_str(r).unwrap();
                (v["error"]["code"].as_i64().unwrap(), v["id"].clone())
            })
            .collect();
        assert_eq!(codes, [(-32600, Value::Null), (-32602, json!(7))]);
    }
}
