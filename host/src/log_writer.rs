//! What Warden writes to the operator's terminal: its log, and the lines
//! commands print (`warden pull`'s ✓ and ✗, progress of `warden dev`).
//!
//! Everything passes the one escaper (`warden_runtime::printable`) on its
//! way out, so a registry's error body or a plugin's text cannot move the
//! cursor, set the clipboard or forge a line. And a line that cannot be
//! written (stderr on a full disk, a pipe nobody reads any more) is dropped:
//! serving matters more than logging, and tracing-subscriber reports a
//! failed write with `eprintln!`, which panics when stderr cannot be written.

use std::io::Write;

use warden_runtime::printable;

/// stderr, never failing; text written here is Warden's own.
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

/// The log's writer: each event the formatter hands it is one line, its
/// controls escaped (its own colours kept when `colors`).
pub struct LogWriter {
    pub colors: bool,
}

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let event = String::from_utf8_lossy(buf);
        let _ = LossyStderr.write(printable::log_event(&event, self.colors).as_bytes());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        LossyStderr.flush()
    }
}

/// One line on stderr, every control character in it escaped: for lines
/// that quote a registry, a plugin or a file.
pub fn say(line: std::fmt::Arguments<'_>) {
    let line = line.to_string();
    let _ = writeln!(LossyStderr, "{}", printable::one_line(&line));
}

/// A report of several lines on stdout, its line breaks kept and every
/// other control character escaped (`warden check`, `warden inspect`).
pub fn print_report(report: &str) {
    let _ = std::io::stdout().lock().write_all(printable::lines(report).as_bytes());
}
