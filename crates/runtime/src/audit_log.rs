//! The audit log's file: where records are appended, and what happens when
//! that goes wrong.
//!
//! - **Rotated** (renamed or removed, the logrotate way): noticed within
//!   `FOLLOW_EVERY` of the next record, or at once on `reopen` (SIGHUP), and
//!   a new file is opened at the configured path.
//! - **Unwritable** (a full disk, an I/O error): by default Warden keeps
//!   serving; each record lost is counted (`warden_audit_write_failures` in
//!   `/metrics`) and the failure is logged at most once per `SAY_EVERY`,
//!   then once more when records are written again. With `--audit-required`
//!   (`required`), an invocation is refused unless the record that says it
//!   starts is written first (`admit`): no plugin runs unaudited.
//!
//! A line cut off by a failing write is removed again, so the file stays
//! one JSON record per line.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::metrics;

/// How often the configured path is compared with the open file.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// A failing log is said at most this often.
const SAY_EVERY: Duration = Duration::from_secs(60);

pub struct AuditLog {
    path: PathBuf,
    required: bool,
    writer: Mutex<Writer>,
}

struct Writer {
    file: File,
    /// The device and inode of the open file.
    identity: (u64, u64),
    followed: Instant,
    failing: Option<Failing>,
}

/// Since when records could not be written, and how many.
struct Failing {
    lost: u64,
    said: Instant,
}

/// Why a record could not be written: what the client and the log are told.
#[derive(Debug, Clone)]
pub struct Unwritable(pub String);

impl std::fmt::Display for Unwritable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl AuditLog {
    /// Opens (or creates) the log at `path`, appending. With `required`,
    /// invocations are refused while records cannot be written.
    pub fn open(path: &Path, required: bool) -> Result<Self> {
        let (file, identity) = open_at(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            required,
            writer: Mutex::new(Writer {
                file,
                identity,
                followed: Instant::now(),
                failing: None,
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `--audit-required`: no invocation runs unless its record can be written.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Appends one record as a single write, so concurrent writers never
    /// interleave within a line. A record that cannot be written is counted
    /// and lost; see the module's documentation.
    pub fn record(&self, record: &impl Serialize) {
        let _ = self.write(record);
    }

    /// `record`, saying whether the record was written.
    pub fn write(&self, record: &impl Serialize) -> Result<(), Unwritable> {
        let mut line = serde_json::to_vec(record).expect("audit records serialize");
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        // With --audit-required a record counts only if it lands at the
        // configured path: checked before every write (one `stat`), and a
        // path that cannot be opened again refuses the record rather than
        // writing it to a file that was moved or removed.
        let moved = if self.required || writer.followed.elapsed() >= FOLLOW_EVERY {
            writer.followed = Instant::now();
            !writer.is_at(&self.path) && !self.reopen_locked(&mut writer, "it was moved or removed")
        } else {
            false
        };
        let appended = match moved && self.required {
            true => Err(std::io::Error::other(
                "its path no longer names the open file, and cannot be opened again",
            )),
            false => append(&mut writer.file, &line),
        };
        match appended {
            Ok(()) => {
                if let Some(failing) = writer.failing.take() {
                    tracing::warn!(
                        "the audit log {} is written again; {} record(s) could not be written before",
                        self.path.display(),
                        failing.lost
                    );
                }
                Ok(())
            }
            Err(error) => {
                if let Some(metrics) = metrics::get() {
                    metrics.audit_write_failed();
                }
                let why = Unwritable(format!("cannot write the audit log {}: {error}", self.path.display()));
                let consequence = if self.required {
                    "invocations are refused until it can be (--audit-required)"
                } else {
                    "serving on; records are lost until it can be (--audit-required would refuse invocations instead)"
                };
                match &mut writer.failing {
                    Some(failing) => {
                        failing.lost += 1;
                        if failing.said.elapsed() >= SAY_EVERY {
                            failing.said = Instant::now();
                            tracing::error!("{why}; {} record(s) lost so far; {consequence}", failing.lost);
                        }
                    }
                    None => {
                        writer.failing = Some(Failing {
                            lost: 1,
                            said: Instant::now(),
                        });
                        tracing::error!(
                            "{why}; {consequence}; said again at most once a minute (`warden_audit_write_failures` counts them)"
                        );
                    }
                }
                Err(why)
            }
        }
    }

    /// With `--audit-required`, writes `start` (the record that an
    /// invocation starts) and refuses the invocation if it cannot be
    /// written. Without it, admits everything and writes nothing.
    pub fn admit(&self, start: &impl Serialize) -> Result<(), Unwritable> {
        if !self.required {
            return Ok(());
        }
        self.write(start).map_err(|why| {
            Unwritable(format!(
                "{why}; Warden runs with --audit-required, so no plugin runs until its audit record can be written"
            ))
        })
    }

    /// Opens the configured path again (SIGHUP, after a rotation).
    pub fn reopen(&self) {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        writer.followed = Instant::now();
        self.reopen_locked(&mut writer, "asked to");
    }

    /// Whether the configured path is open again.
    fn reopen_locked(&self, writer: &mut Writer, why: &str) -> bool {
        match open_at(&self.path) {
            Ok((file, identity)) => {
                let same = identity == writer.identity;
                writer.file = file;
                writer.identity = identity;
                if !same {
                    tracing::info!("audit log: opened {} again ({why})", self.path.display());
                }
                true
            }
            Err(error) => {
                match self.required {
                    true => tracing::error!("{error:#}; records are refused until it can be (--audit-required)"),
                    false => tracing::error!("{error:#}; audit records still go to the file that was open"),
                }
                false
            }
        }
    }
}

impl Writer {
    /// Whether the configured path still names the open file.
    fn is_at(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == self.identity)
    }
}

/// Opens the log for appending, never waiting: a FIFO in its place with no
/// reader (whose open would block, under the writer's lock, until one came)
/// is refused at once, and one with a reader is written without waiting (a
/// full pipe loses the record, or refuses it with --audit-required). A
/// device (`/dev/stderr`) is written as it is.
fn open_at(path: &Path) -> Result<(File, (u64, u64))> {
    // Opened to append, never read; O_NONBLOCK is the rule bounded_file
    // keeps for reads (a FIFO never holds the writer's lock).
    #[allow(clippy::disallowed_methods)]
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(error) => {
            let what = match std::fs::metadata(path) {
                Ok(meta) if meta.file_type().is_fifo() => " (a FIFO with no reader: Warden does not wait for one)",
                Ok(meta) if meta.is_dir() => " (a folder: point --audit-log at a file)",
                _ => "",
            };
            return Err(error).with_context(|| format!("cannot open the audit log {}{what}", path.display()));
        }
    };
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read the audit log {}", path.display()))?;
    Ok((file, (meta.dev(), meta.ino())))
}

/// Appends `line`; if only part of it could be written, cuts that part off
/// again, so no half record is left for the next one to follow.
fn append(file: &mut File, line: &[u8]) -> std::io::Result<()> {
    let mut written = 0;
    let result = loop {
        if written == line.len() {
            break Ok(());
        }
        match file.write(&line[written..]) {
            Ok(0) => break Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => break Err(error),
        }
    };
    if result.is_err()
        && written > 0
        && let Ok(meta) = file.metadata()
    {
        let _ = file.set_len(meta.len().saturating_sub(written as u64));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    // The test's own log in its temporary folder.
    #[allow(clippy::disallowed_methods)]
    fn lines(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_rotated_log_is_followed_to_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, false).unwrap();
        log.record(&serde_json::json!({"n": 1}));
        std::fs::rename(&path, dir.path().join("audit.jsonl.1")).unwrap();
        // Before SIGHUP: the renamed file, as logrotate expects.
        log.record(&serde_json::json!({"n": 2}));
        log.reopen();
        log.record(&serde_json::json!({"n": 3}));
        assert_eq!(
            lines(&dir.path().join("audit.jsonl.1")),
            [serde_json::json!({"n": 1}), serde_json::json!({"n": 2})]
        );
        assert_eq!(lines(&path), [serde_json::json!({"n": 3})]);

        // Removed, with no SIGHUP: found within FOLLOW_EVERY.
        std::fs::remove_file(&path).unwrap();
        log.writer.lock().unwrap().followed -= FOLLOW_EVERY;
        log.record(&serde_json::json!({"n": 4}));
        assert_eq!(lines(&path), [serde_json::json!({"n": 4})]);
    }

    #[test]
    fn an_unwritable_log_refuses_only_when_required() {
        let relaxed = AuditLog::open(Path::new("/dev/full"), false).unwrap();
        assert!(relaxed.admit(&serde_json::json!({})).is_ok());
        assert!(relaxed.write(&serde_json::json!({"n": 1})).is_err());
        let required = AuditLog::open(Path::new("/dev/full"), true).unwrap();
        let refused = required.admit(&serde_json::json!({})).unwrap_err().0;
        assert!(refused.contains("cannot write the audit log /dev/full"), "{refused}");
        assert!(refused.contains("--audit-required"), "{refused}");
    }
}
