//! The stdio transport's framing and message parsing, against a model.
//!
//! The fuzzer's first byte picks how the input is cut into reads (1 to 15
//! bytes each, or all at once) and the line limit; the rest is what a client
//! writes to Warden's stdin. The transport must read it to the end without
//! panicking or hanging, and then:
//! - every line of output is one JSON-RPC error object;
//! - each newline-terminated line that parses as a client message is handed
//!   on, in order, unless it is a standard method with unreadable params,
//!   which gets a `-32602` reply instead;
//! - each line over the limit gets exactly one "message longer than" reply,
//!   and nothing of it is handed on;
//! - a last line cut off by the end of input is dropped.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use warden_transport::stdio::{MAX_LINE_BYTES, StdioTransport};

/// Line limits to try: small ones reach the over-long-line path with small inputs.
const LINE_LIMITS: [usize; 4] = [16, 100, 1000, MAX_LINE_BYTES];

pub fn check(data: &[u8]) {
    let Some((&shape, input)) = data.split_first() else {
        return;
    };
    let read_size = match shape & 0x0f {
        0 => usize::MAX,
        n => usize::from(n),
    };
    let max_line = LINE_LIMITS[usize::from(shape >> 4) % LINE_LIMITS.len()];

    let output = Arc::new(Mutex::new(Vec::new()));
    let received = runtime().block_on(async {
        let reader = Chunked { input, read_size };
        let writer = SharedWriter(output.clone());
        let mut transport = StdioTransport::new(reader, writer).with_max_line_bytes(max_line);
        let mut received = Vec::new();
        while let Some(message) = transport.receive().await {
            received.push(serde_json::to_value(&message).expect("a received message serializes"));
        }
        received
    });
    let output = output.lock().unwrap().clone();

    let expected = Expected::of(input, max_line);
    let replies: Vec<Value> = output
        .split_inclusive(|&b| b == b'\n')
        .map(|line| {
            assert!(line.ends_with(b"\n"), "a reply not ended by a newline: {line:?}");
            let reply: Value = serde_json::from_slice(line).expect("every reply is JSON");
            assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
            let code = reply["error"]["code"].as_i64().expect("every reply is an error");
            assert!([-32700, -32600, -32602].contains(&code), "{reply}");
            reply
        })
        .collect();
    let message = |reply: &Value| reply["error"]["message"].as_str().unwrap_or_default().to_string();
    let too_long = replies
        .iter()
        .filter(|r| message(r).starts_with("Invalid Request: message longer than"))
        .count();
    assert_eq!(too_long, expected.too_long, "over-long lines and their replies");

    // Handed on: the parseable lines in order, less those answered -32602.
    let mut candidates = expected.messages.iter();
    for message in &received {
        assert!(
            candidates.any(|candidate| candidate == message),
            "{message} was handed on, but is not the next parseable line"
        );
    }
    let held_back = expected.messages.len() - received.len();
    let schema_replies = replies
        .iter()
        .filter(|r| r["error"]["code"] == -32602 && message(r).contains("do not match the MCP schema"))
        .count();
    assert_eq!(
        held_back, schema_replies,
        "each parseable line not handed on is a standard method with unreadable params"
    );
    assert!(
        replies.len() <= expected.too_long + expected.messages.len() + expected.unparsable,
        "at most one reply per line"
    );
}

/// What the transport should make of `input`, worked out line by line.
struct Expected {
    /// The messages of the complete, parseable lines, as JSON.
    messages: Vec<Value>,
    /// Lines over the limit (a cut-off last line too, once it is over).
    too_long: usize,
    /// Complete lines that are not client messages.
    unparsable: usize,
}

impl Expected {
    fn of(input: &[u8], max_line: usize) -> Self {
        let mut expected = Self {
            messages: Vec::new(),
            too_long: 0,
            unparsable: 0,
        };
        for line in input.split_inclusive(|&b| b == b'\n') {
            if line.len() > max_line {
                expected.too_long += 1;
                continue;
            }
            if !line.ends_with(b"\n") {
                continue;
            }
            let trimmed = trim(line);
            if trimmed.is_empty() {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(trimmed) {
                Ok(message) => expected
                    .messages
                    .push(serde_json::to_value(&message).expect("a parsed message serializes")),
                Err(_) => expected.unparsable += 1,
            }
        }
        expected
    }
}

/// The transport's own trimming: the newline, a `\r` before it, a leading BOM.
fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a tokio runtime")
    })
}

/// Hands out `input` at most `read_size` bytes per read, as a pipe might.
struct Chunked<'a> {
    input: &'a [u8],
    read_size: usize,
}

impl AsyncRead for Chunked<'_> {
    fn poll_read(mut self: Pin<&mut Self>, _: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let n = self.input.len().min(self.read_size).min(buf.remaining());
        let (now, rest) = self.input.split_at(n);
        buf.put_slice(now);
        self.input = rest;
        Poll::Ready(Ok(()))
    }
}

/// Collects what the transport writes.
struct SharedWriter(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for SharedWriter {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
