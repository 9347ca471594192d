//! Capture of a guest's stdout and stderr.
//!
//! On the stdio transport the host's stdout *is* the protocol channel, so a
//! guest never writes to it: its output lands in a bounded buffer that is
//! logged to stderr after the call. Past the cap, bytes are counted and
//! dropped — never a trap, so a chatty plugin still returns its result.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

use crate::secrets::Redactor;

#[derive(Default)]
struct Buffer {
    kept: Vec<u8>,
    dropped: u64,
}

/// A bounded, truncating sink for one stream of one call.
#[derive(Clone)]
pub struct CapturedOutput {
    buffer: Arc<Mutex<Buffer>>,
    cap: usize,
}

impl CapturedOutput {
    pub fn new(cap: usize) -> Self {
        Self {
            buffer: Arc::default(),
            cap,
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let room = self.cap.saturating_sub(buffer.kept.len());
        let kept = room.min(bytes.len());
        buffer.kept.extend_from_slice(&bytes[..kept]);
        buffer.dropped += (bytes.len() - kept) as u64;
    }

    /// A one-line summary of why the guest crashed, from what it printed:
    /// the exception of a Python traceback (componentize-py's runtime then
    /// panics with a message that names no cause), else a Rust panic's
    /// message, else the last line; the plugin's secrets redacted.
    pub fn crash_summary(&self, redactor: &Redactor) -> Option<String> {
        let buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&buffer.kept);
        let text = if buffer.dropped > 0 {
            redactor.redact_cut(&text)
        } else {
            redactor.redact(&text)
        };
        if let Some(exception) = python_exception(&text) {
            return Some(crate::printable::one_line(exception).chars().take(300).collect());
        }
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let line = match lines.iter().rposition(|l| l.contains("panicked at")) {
            Some(at) => lines.get(at + 1).map_or(lines[at], |message| *message),
            None => *lines
                .iter()
                .rev()
                .find(|l| !l.starts_with("note: run with `RUST_BACKTRACE"))?,
        };
        // Shown to the client and logged: one line, plugin text escaped.
        Some(crate::printable::one_line(line).chars().take(300).collect())
    }

    /// The captured text (lossily decoded) and how many bytes were dropped.
    pub fn take(&self) -> (String, u64) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let text = String::from_utf8_lossy(&buffer.kept).into_owned();
        let dropped = buffer.dropped;
        *buffer = Buffer::default();
        (text, dropped)
    }
}

/// The last Python traceback's exception line (`ModuleNotFoundError: No
/// module named 'csv'`): its last unindented line, before any panic.
fn python_exception(text: &str) -> Option<&str> {
    let start = text.rfind("Traceback (most recent call last):")?;
    text[start..]
        .lines()
        .skip(1)
        .take_while(|line| !line.contains("panicked at"))
        .filter(|line| !line.starts_with([' ', '\t']) && !line.trim().is_empty())
        .last()
        .map(str::trim)
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

/// The permit handed out by `check-write`: it also bounds what the host
/// allocates for a single write on the guest's behalf.
const WRITE_PERMIT: usize = 64 * 1024;

#[async_trait::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_the_cap_and_counts_the_rest() {
        let out = CapturedOutput::new(4);
        out.push(b"abc");
        out.push(b"defgh");
        assert_eq!(out.take(), ("abcd".to_string(), 4));
        assert_eq!(out.take(), (String::new(), 0));
    }

    #[test]
    fn crash_summary_prefers_the_panic_message() {
        let out = CapturedOutput::new(1 << 10);
        out.push(b"working\nthread '<unnamed>' panicked at src/lib.rs:3:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n");
        let none = Redactor::default();
        assert_eq!(out.crash_summary(&none).as_deref(), Some("boom"));
        let out = CapturedOutput::new(1 << 10);
        out.push(b"first\nlast words\n\n");
        assert_eq!(out.crash_summary(&none).as_deref(), Some("last words"));
        assert_eq!(CapturedOutput::new(8).crash_summary(&none), None);
    }

    #[test]
    fn crash_summary_names_a_python_exception() {
        let none = Redactor::default();
        let out = CapturedOutput::new(4096);
        out.push(
            b"Traceback (most recent call last):\n  File \"/0/app.py\", line 3, in <module>\n    import csv\n\
              ModuleNotFoundError: No module named 'csv'\n\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1280:25:\n\
              Python function threw an unexpected exception\nnote: run with `RUST_BACKTRACE=1`\n",
        );
        assert_eq!(
            out.crash_summary(&none).as_deref(),
            Some("ModuleNotFoundError: No module named 'csv'")
        );
    }

    #[test]
    fn crash_summary_redacts_secrets_even_at_the_cap() {
        let secret = crate::secrets::Secret::new("sk-live-4f9a1c");
        let redactor = Redactor::new([&secret]).unwrap();
        let out = CapturedOutput::new(1 << 10);
        out.push(b"thread '<unnamed>' panicked at src/lib.rs:3:5:\nbad key sk-live-4f9a1c\n");
        assert_eq!(out.crash_summary(&redactor).as_deref(), Some("bad key [redacted]"));
        let out = CapturedOutput::new(16);
        out.push(b"bad key sk-live-4f9a1c\n");
        assert_eq!(out.crash_summary(&redactor).as_deref(), Some("bad key [redacted]"));
    }
}
