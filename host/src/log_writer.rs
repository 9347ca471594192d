//! Where the server's own log goes: stderr, where a line that cannot be
//! written (stderr on a full disk, a pipe nobody reads any more) is dropped.
//! Serving matters more than logging; and tracing-subscriber reports a
//! failed write with `eprintln!`, which panics when stderr cannot be written,
//! so without this the first log line on a full disk ended the server.

use std::io::Write;

/// stderr, never failing.
pub struct LossyStderr;

impl Write for LossyStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // One `write_all` per event: a line is written whole or dropped.
        let _ = std::io::stderr().lock().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}
