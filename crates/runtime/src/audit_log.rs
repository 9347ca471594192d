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
//!
//! The file is written by one thread of its own, never under a lock a call
//! holds: a call hands its record over and waits at most `CONFIRM_WITHIN`
//! for the word that it was written. A disk that stalls (a hung network
//! mount) therefore costs a call that long, never the server: with
//! `--audit-required` the call is refused with the reason, without it the
//! record is counted as not written. At most `QUEUE` records wait.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::metrics;

/// How often the configured path is compared with the open file.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// A failing log is said at most this often.
const SAY_EVERY: Duration = Duration::from_secs(60);

/// How long a call waits for its record to be written.
const CONFIRM_WITHIN: Duration = Duration::from_secs(2);

/// Records handed to the writer and not yet written, at most.
const QUEUE: usize = 1024;

pub struct AuditLog {
    path: PathBuf,
    required: bool,
    jobs: SyncSender<Job>,
    /// When a record the writer did not take in time was last said.
    unconfirmed_said: std::sync::Mutex<Option<Instant>>,
}

/// What the writer thread is asked to do.
enum Job {
    Append {
        line: Vec<u8>,
        done: SyncSender<Result<(), Unwritable>>,
    },
    Reopen {
        done: SyncSender<()>,
    },
    /// Tests reach into the writer (age its follow check, stall it).
    #[cfg(test)]
    Run(Box<dyn FnOnce(&mut Worker) + Send>),
}

/// The writer thread's own state: the only code that touches the file.
struct Worker {
    path: PathBuf,
    required: bool,
    writer: Writer,
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
        let worker = Worker {
            path: path.to_path_buf(),
            required,
            writer: Writer {
                file,
                identity,
                followed: Instant::now(),
                failing: None,
            },
        };
        let (jobs, queue) = mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || worker.run(queue))
            .context("cannot start the audit log's writer")?;
        Ok(Self {
            path: path.to_path_buf(),
            required,
            jobs,
            unconfirmed_said: std::sync::Mutex::new(None),
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

    /// `record`, saying whether the record was written: handed to the
    /// writer and confirmed within `CONFIRM_WITHIN`.
    pub fn write(&self, record: &impl Serialize) -> Result<(), Unwritable> {
        let mut line = serde_json::to_vec(record).expect("audit records serialize");
        line.push(b'\n');
        let (done, confirmed) = mpsc::sync_channel(1);
        let unwritten = match self.jobs.try_send(Job::Append { line, done }) {
            Ok(()) => match confirmed.recv_timeout(CONFIRM_WITHIN) {
                Ok(result) => return result,
                Err(_) => format!(
                    "the audit log {} did not confirm a record within {CONFIRM_WITHIN:?} (a stalled disk?); \
                     it may still be written",
                    self.path.display()
                ),
            },
            Err(TrySendError::Full(_)) => format!(
                "the audit log {} has {QUEUE} records waiting to be written (a stalled disk?)",
                self.path.display()
            ),
            Err(TrySendError::Disconnected(_)) => {
                format!("the audit log {}'s writer has stopped", self.path.display())
            }
        };
        if let Some(metrics) = metrics::get() {
            metrics.audit_write_failed();
        }
        // Said at most once a minute; the counter has every one. Only a
        // timestamp is behind this lock, and a busy lock skips the saying.
        if let Ok(mut said) = self.unconfirmed_said.try_lock()
            && said.is_none_or(|at| at.elapsed() >= SAY_EVERY)
        {
            *said = Some(Instant::now());
            tracing::error!(
                "{unwritten}; said again at most once a minute (`warden_audit_write_failures` counts them)"
            );
        }
        Err(Unwritable(unwritten))
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

    /// Opens the configured path again (SIGHUP, after a rotation), waiting
    /// at most `CONFIRM_WITHIN` for the writer.
    pub fn reopen(&self) {
        let (done, reopened) = mpsc::sync_channel(1);
        if self.jobs.try_send(Job::Reopen { done }).is_ok() && reopened.recv_timeout(CONFIRM_WITHIN).is_err() {
            tracing::error!(
                "the audit log {} is slow to open again; its writer goes on when the disk answers",
                self.path.display()
            );
        }
    }
}

impl Worker {
    fn run(mut self, queue: Receiver<Job>) {
        for job in queue {
            match job {
                Job::Append { line, done } => {
                    let _ = done.send(self.append(&line));
                }
                Job::Reopen { done } => {
                    self.writer.followed = Instant::now();
                    self.reopen("asked to");
                    let _ = done.send(());
                }
                #[cfg(test)]
                Job::Run(job) => job(&mut self),
            }
        }
    }

    /// Appends one record as a single write, so records never interleave
    /// within a line.
    fn append(&mut self, line: &[u8]) -> Result<(), Unwritable> {
        // With --audit-required a record counts only if it lands at the
        // configured path: checked before every write (one `stat`), and a
        // path that cannot be opened again refuses the record rather than
        // writing it to a file that was moved or removed.
        let moved = if self.required || self.writer.followed.elapsed() >= FOLLOW_EVERY {
            self.writer.followed = Instant::now();
            !self.writer.is_at(&self.path) && !self.reopen("it was moved or removed")
        } else {
            false
        };
        let appended = match moved && self.required {
            true => Err(std::io::Error::other(
                "its path no longer names the open file, and cannot be opened again",
            )),
            false => append(&mut self.writer.file, line),
        };
        let writer = &mut self.writer;
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

    /// Whether the configured path is open again.
    fn reopen(&mut self, why: &str) -> bool {
        match open_at(&self.path) {
            Ok((file, identity)) => {
                let same = identity == self.writer.identity;
                self.writer.file = file;
                self.writer.identity = identity;
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
        log.jobs
            .send(Job::Run(Box::new(|worker| worker.writer.followed -= FOLLOW_EVERY)))
            .unwrap();
        log.record(&serde_json::json!({"n": 4}));
        assert_eq!(lines(&path), [serde_json::json!({"n": 4})]);
    }

    #[test]
    fn a_stalled_disk_costs_a_call_at_most_its_wait_and_refuses_it_when_required() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, true).unwrap();
        // The writer stalls (a hung mount) for longer than a call waits.
        log.jobs
            .send(Job::Run(Box::new(|_| std::thread::sleep(CONFIRM_WITHIN * 2))))
            .unwrap();
        let started = Instant::now();
        let refused = log.admit(&serde_json::json!({"n": 1})).unwrap_err().0;
        assert!(started.elapsed() < CONFIRM_WITHIN * 2, "{:?}", started.elapsed());
        assert!(refused.contains("did not confirm a record within 2s"), "{refused}");
        assert!(refused.contains("--audit-required"), "{refused}");
        // A full queue refuses at once.
        for _ in 0..QUEUE + 1 {
            let _ = log.jobs.try_send(Job::Run(Box::new(|_| {})));
        }
        let started = Instant::now();
        let refused = log.admit(&serde_json::json!({"n": 2})).unwrap_err().0;
        assert!(started.elapsed() < CONFIRM_WITHIN, "{:?}", started.elapsed());
        assert!(refused.contains("records waiting to be written"), "{refused}");
        // Once the disk answers, records are written again.
        std::thread::sleep(CONFIRM_WITHIN * 2);
        log.admit(&serde_json::json!({"n": 3})).unwrap();
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
