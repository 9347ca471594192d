//! The embedded task store: records in this process's memory, bounded in
//! count and in bytes at every write — a task's creation, each write of its
//! record (its result included) and each answer kept for it — and swept of
//! expired records as it goes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use serde_json::Value;

use super::record::{TaskRecord, now_ms};
use super::store::{Bounds, Control, Expired, MAX_UNREPORTED, Put, Refusal, SWEEP_BATCH, Seen, Swept};

pub struct MemoryStore {
    inner: Mutex<Inner>,
    bounds: Bounds,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Bytes counted for every entry (`Entry::charge`), and for each caller's.
    bytes: usize,
    by_caller: HashMap<String, usize>,
    /// Swept since the last `MemoryStore::sweep` took them, at most
    /// `MAX_UNREPORTED`; past it, counted in `unreported` instead.
    expired: Vec<Expired>,
    unreported: usize,
}

struct Entry {
    record: Kept,
    /// What this entry counts against the bounds: the record's charge
    /// (`TaskRecord::charge`) and its answers.
    charge: usize,
    cancel: bool,
    /// Each answer as JSON text, parsed again when the runner takes it.
    answers: BTreeMap<String, Box<str>>,
    answers_bytes: usize,
}

/// Bytes answers hold, as the store counts them (and as they are kept).
fn answers_size(answers: &BTreeMap<String, Box<str>>) -> usize {
    answers.iter().map(|(key, text)| key.len() + text.len()).sum()
}

/// A record as this store keeps it: its JSON text, which is what the byte
/// bound counts and what it costs — kept as a tree of values, a result of
/// many small items took some 30 times its text — and the few fields the
/// store decides on. `record()` parses it again for whoever asks.
struct Kept {
    json: Box<str>,
    id: String,
    caller: String,
    plugin: String,
    tool: String,
    terminal: bool,
    lease_until_ms: u64,
    expires_ms: u64,
}

impl Kept {
    fn new(record: &TaskRecord) -> Self {
        Kept {
            json: serde_json::to_string(record).expect("a record serializes").into(),
            id: record.id.clone(),
            caller: record.caller.clone(),
            plugin: record.plugin.clone(),
            tool: record.tool.clone(),
            terminal: record.is_terminal(),
            lease_until_ms: record.lease_until_ms,
            expires_ms: record.expires_ms(),
        }
    }

    fn record(&self) -> TaskRecord {
        serde_json::from_str(&self.json).expect("the store wrote this text from a record")
    }

    fn is_terminal(&self) -> bool {
        self.terminal
    }

    fn expires_ms(&self) -> u64 {
        self.expires_ms
    }
}

impl MemoryStore {
    pub fn new(bounds: Bounds) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            bounds,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("task store lock")
    }

    pub(super) fn create(&self, record: &TaskRecord) -> Result<(), Refusal> {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        let charge = record.charge();
        let held = inner
            .tasks
            .values()
            .filter(|e| e.record.caller == record.caller)
            .count();
        if held >= self.bounds.per_caller {
            return Err(Refusal::Full(format!(
                "this caller holds {held} tasks already (at most {}); each is kept until its ttlMs ends",
                self.bounds.per_caller
            )));
        }
        if inner.tasks.len() >= self.bounds.total {
            return Err(Refusal::Full(format!(
                "this Warden holds {} tasks already, at most {}",
                inner.tasks.len(),
                self.bounds.total
            )));
        }
        inner
            .fits(&self.bounds, &record.caller, 0, charge)
            .map_err(Refusal::Full)?;
        inner.recharge(&record.caller, 0, charge);
        inner.tasks.insert(
            record.id.clone(),
            Entry {
                record: Kept::new(record),
                charge,
                cancel: false,
                answers: BTreeMap::new(),
                answers_bytes: 0,
            },
        );
        Ok(())
    }

    pub(super) fn get(&self, id: &str) -> Option<Seen> {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        let entry = inner.tasks.get(id)?;
        Some(Seen {
            record: entry.record.record(),
            answered: entry.answers.keys().cloned().collect(),
        })
    }

    /// The runner's write. A record that would take the store past a bound
    /// is not written: the task ends `failed` instead, saying why, in the
    /// room its entry kept for that (`ENDING_ROOM`).
    pub(super) fn put(&self, record: &TaskRecord) -> Put {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get(&record.id) else {
            return Put::Lost;
        };
        if entry.record.is_terminal() {
            return Put::Lost;
        }
        let (old, answers_bytes, caller) = (entry.charge, entry.answers_bytes, entry.record.caller.clone());
        let charge = record.charge() + answers_bytes;
        let (written, put) = match inner.fits(&self.bounds, &caller, old, charge) {
            Ok(()) => (record.clone(), Put::Written),
            Err(full) => {
                let why = format!(
                    "the task's record ({} bytes, its result included) does not fit in the task store, so the \
                     result was not kept: {full}",
                    record.size()
                );
                let failed = entry.record.record().ended_failed(&why, now_ms());
                (failed.clone(), Put::Ended(Box::new(failed)))
            }
        };
        let charge = written.charge() + answers_bytes;
        debug_assert!(
            matches!(put, Put::Written) || charge <= old,
            "an ending fits in its room"
        );
        inner.recharge(&caller, old, charge);
        let entry = inner.tasks.get_mut(&record.id).expect("looked up above");
        entry.record = Kept::new(&written);
        entry.charge = charge;
        put
    }

    pub(super) fn fail_lapsed(&self, now: u64) -> Vec<TaskRecord> {
        let mut inner = self.lock();
        let lapsed: Vec<String> = inner
            .tasks
            .values()
            .filter(|e| !e.record.is_terminal() && e.record.lease_until_ms < now)
            .take(SWEEP_BATCH)
            .map(|e| e.record.id.clone())
            .collect();
        let mut failed = Vec::new();
        for id in lapsed {
            let entry = &inner.tasks[&id];
            let seen = entry.record.record().seen_at(now, &[]);
            let why = seen
                .error
                .as_ref()
                .and_then(|e| e.get("message")?.as_str())
                .unwrap_or("the task's lease ran out")
                .to_string();
            let record = entry.record.record().ended_failed(&why, seen.updated_ms);
            let (old, caller) = (entry.charge, entry.record.caller.clone());
            let charge = record.charge() + entry.answers_bytes;
            inner.recharge(&caller, old, charge);
            let entry = inner.tasks.get_mut(&id).expect("listed above");
            entry.record = Kept::new(&record);
            entry.charge = charge;
            failed.push(record);
        }
        failed
    }

    /// Keeps answers for the runner, within the bounds: answers that would
    /// take the store past one are refused, saying which.
    pub(super) fn answer(&self, id: &str, answers: BTreeMap<String, Value>) -> Result<(), String> {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get(id) else {
            return Ok(());
        };
        let mut kept = entry.answers.clone();
        kept.extend(answers.into_iter().map(|(key, value)| (key, value.to_string().into())));
        let kept_bytes = answers_size(&kept);
        let (old, caller) = (entry.charge, entry.record.caller.clone());
        let charge = old - entry.answers_bytes + kept_bytes;
        inner
            .fits(&self.bounds, &caller, old, charge)
            .map_err(|full| format!("the answers ({kept_bytes} bytes) do not fit in the task store: {full}"))?;
        inner.recharge(&caller, old, charge);
        let entry = inner.tasks.get_mut(id).expect("looked up above");
        entry.answers = kept;
        entry.answers_bytes = kept_bytes;
        entry.charge = charge;
        Ok(())
    }

    /// True the first time it is asked.
    pub(super) fn cancel(&self, id: &str) -> bool {
        match self.lock().tasks.get_mut(id) {
            Some(entry) => !std::mem::replace(&mut entry.cancel, true),
            None => false,
        }
    }

    /// Everything expired since the last sweep: it is all in memory
    /// already, so one sweep always catches up.
    pub(super) fn sweep(&self) -> Swept {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        Swept {
            expired: std::mem::take(&mut inner.expired),
            unreported: std::mem::take(&mut inner.unreported),
        }
    }

    pub(super) fn control(&self, id: &str) -> Control {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get_mut(id) else {
            return Control::default();
        };
        let control = Control {
            cancel: entry.cancel,
            answers: std::mem::take(&mut entry.answers)
                .into_iter()
                .map(|(key, text)| {
                    let value = serde_json::from_str(&text).expect("the store wrote this text from a value");
                    (key, value)
                })
                .collect(),
        };
        let (old, freed, caller) = (entry.charge, entry.answers_bytes, entry.record.caller.clone());
        entry.charge -= freed;
        entry.answers_bytes = 0;
        inner.recharge(&caller, old, old - freed);
        control
    }
}

impl Inner {
    /// Whether `caller`'s entry can go from `old` to `new` bytes within the
    /// bounds; if not, which bound it would pass.
    fn fits(&self, bounds: &Bounds, caller: &str, old: usize, new: usize) -> Result<(), String> {
        let mine = self.by_caller.get(caller).copied().unwrap_or(0);
        if self.bytes - old + new > bounds.bytes {
            return Err(format!(
                "it holds {} of its {} bytes for all tasks",
                self.bytes, bounds.bytes
            ));
        }
        if mine - old + new > bounds.per_caller_bytes {
            return Err(format!(
                "this caller's tasks hold {mine} of their {} bytes",
                bounds.per_caller_bytes
            ));
        }
        Ok(())
    }

    fn recharge(&mut self, caller: &str, old: usize, new: usize) {
        self.bytes = self.bytes - old + new;
        let mine = self.by_caller.entry(caller.to_string()).or_default();
        *mine = *mine - old + new;
        if *mine == 0 {
            self.by_caller.remove(caller);
        }
    }

    fn sweep(&mut self, now: u64) {
        let gone: Vec<String> = self
            .tasks
            .values()
            .filter(|e| e.record.expires_ms() <= now)
            .map(|e| e.record.id.clone())
            .collect();
        for id in gone {
            let entry = self.tasks.remove(&id).expect("listed above");
            self.recharge(&entry.record.caller, entry.charge, 0);
            if self.expired.len() >= MAX_UNREPORTED {
                self.unreported += 1;
                continue;
            }
            self.expired.push(Expired {
                id,
                plugin: entry.record.plugin,
                tool: entry.record.tool,
            });
        }
    }
}

#[cfg(test)]
#[path = "memory_store_tests.rs"]
mod tests;
