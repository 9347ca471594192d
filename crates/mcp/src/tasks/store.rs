//! Where task records live: in this process (the default), or in Redis
//! (`--task-store redis://…`) so that every replica answers for every task.
//!
//! Three things per task, so that only one writer ever writes each: the
//! record (written by the replica running the task), the answers clients
//! sent through `tasks/update`, and whether `tasks/cancel` was asked (both
//! written by whichever replica took the request, and taken by the runner).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use anyhow::Result;
use serde_json::Value;

use super::record::{TaskRecord, now_ms};
use super::redis_store::RedisStore;

/// How much the store holds at most. A record is held until its `ttlMs`
/// ends, so a client creating tasks as fast as it can meets these.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Records one caller may hold, finished or not.
    pub per_caller: usize,
    /// Records in all.
    pub total: usize,
    /// Bytes of records in all (results included), in this process.
    pub bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            per_caller: 256,
            total: 4096,
            bytes: 64 << 20,
        }
    }
}

/// What the runner of a task takes from the store: a cancel request, and
/// the answers that arrived.
#[derive(Debug, Default)]
pub struct Control {
    pub cancel: bool,
    pub answers: BTreeMap<String, Value>,
}

/// A task whose `ttlMs` ended, for its `expired` audit event: each is
/// reported once, by one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expired {
    pub id: String,
    pub plugin: String,
    pub tool: String,
}

/// Expired tasks reported by one sweep at most; the next sweep takes the rest.
pub const SWEEP_BATCH: usize = 256;

/// A record as a reader sees it, with the keys already answered.
pub struct Seen {
    pub record: TaskRecord,
    pub answered: Vec<String>,
}

pub enum TaskStore {
    Memory(MemoryStore),
    Redis(RedisStore),
}

/// Why a task cannot be created.
#[derive(Debug)]
pub enum Refusal {
    /// A bound is reached: the message says which.
    Full(String),
    Unavailable(anyhow::Error),
}

impl TaskStore {
    pub fn memory(bounds: Bounds) -> Self {
        TaskStore::Memory(MemoryStore::new(bounds))
    }

    /// Drops the records whose `ttlMs` ended and says which they were.
    pub async fn sweep(&self) -> Result<Vec<Expired>> {
        match self {
            TaskStore::Memory(store) => Ok(store.sweep()),
            TaskStore::Redis(store) => store.sweep().await,
        }
    }

    /// Stores a new record; it is there for every replica when this returns.
    pub async fn create(&self, record: &TaskRecord) -> Result<(), Refusal> {
        match self {
            TaskStore::Memory(store) => store.create(record),
            TaskStore::Redis(store) => store.create(record).await,
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Seen>> {
        match self {
            TaskStore::Memory(store) => Ok(store.get(id)),
            TaskStore::Redis(store) => store.get(id).await,
        }
    }

    /// The runner's write of its record. False when it was not written: the
    /// record is gone, or already ended — by a sweep that found the runner's
    /// lease run out (`fail_lapsed`), so the runner has lost the task.
    pub async fn put(&self, record: &TaskRecord) -> Result<bool> {
        match self {
            TaskStore::Memory(store) => Ok(store.put(record)),
            TaskStore::Redis(store) => store.put(record).await,
        }
    }

    /// Writes `failed` into the records of unfinished tasks whose runner's
    /// lease ran out (its replica died or stalled) and returns them as
    /// written: each is written, and returned, by one sweep only.
    pub async fn fail_lapsed(&self) -> Result<Vec<TaskRecord>> {
        match self {
            TaskStore::Memory(store) => Ok(store.fail_lapsed(now_ms())),
            TaskStore::Redis(store) => store.fail_lapsed().await,
        }
    }

    /// Answers for the task's outstanding questions (checked by the caller).
    /// `expires_ms`: the task's own expiry, which these expire with.
    pub async fn answer(&self, id: &str, answers: BTreeMap<String, Value>, expires_ms: u64) -> Result<()> {
        match self {
            TaskStore::Memory(store) => {
                store.answer(id, answers);
                Ok(())
            }
            TaskStore::Redis(store) => store.answer(id, answers, expires_ms).await,
        }
    }

    pub async fn cancel(&self, id: &str, expires_ms: u64) -> Result<()> {
        match self {
            TaskStore::Memory(store) => {
                store.cancel(id);
                Ok(())
            }
            TaskStore::Redis(store) => store.cancel(id, expires_ms).await,
        }
    }

    /// Takes what arrived for the runner.
    pub async fn control(&self, id: &str) -> Result<Control> {
        match self {
            TaskStore::Memory(store) => Ok(store.control(id)),
            TaskStore::Redis(store) => store.control(id).await,
        }
    }

    /// Single-use records for interactive `requestState`s shared by replicas
    /// (`None`: this store keeps none; the process's own set is used).
    pub async fn use_once(&self, digest: &[u8; 32], ttl_ms: u64) -> Option<Result<bool>> {
        match self {
            TaskStore::Memory(_) => None,
            TaskStore::Redis(store) => Some(store.use_once(digest, ttl_ms).await),
        }
    }
}

/// The embedded store: bounded, swept of expired records as it goes.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    bounds: Bounds,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    bytes: usize,
    /// Swept since the last `MemoryStore::sweep` took them; at most as
    /// many as the store held.
    expired: Vec<Expired>,
}

struct Entry {
    record: TaskRecord,
    size: usize,
    cancel: bool,
    answers: BTreeMap<String, Value>,
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

    fn create(&self, record: &TaskRecord) -> Result<(), Refusal> {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        let size = record.size();
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
        if inner.tasks.len() >= self.bounds.total || inner.bytes + size > self.bounds.bytes {
            return Err(Refusal::Full(format!(
                "this Warden holds {} tasks ({} bytes) already, at most {} ({} bytes)",
                inner.tasks.len(),
                inner.bytes,
                self.bounds.total,
                self.bounds.bytes
            )));
        }
        inner.bytes += size;
        inner.tasks.insert(
            record.id.clone(),
            Entry {
                record: record.clone(),
                size,
                cancel: false,
                answers: BTreeMap::new(),
            },
        );
        Ok(())
    }

    fn get(&self, id: &str) -> Option<Seen> {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        let entry = inner.tasks.get(id)?;
        Some(Seen {
            record: entry.record.clone(),
            answered: entry.answers.keys().cloned().collect(),
        })
    }

    fn put(&self, record: &TaskRecord) -> bool {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get_mut(&record.id) else {
            return false;
        };
        if entry.record.is_terminal() {
            return false;
        }
        let (old, size) = entry.replace(record.clone());
        inner.bytes = inner.bytes - old + size;
        true
    }

    fn fail_lapsed(&self, now: u64) -> Vec<TaskRecord> {
        let mut inner = self.lock();
        let mut failed = Vec::new();
        let mut bytes = inner.bytes;
        for entry in inner.tasks.values_mut() {
            if entry.record.is_terminal() || entry.record.lease_until_ms >= now || failed.len() >= SWEEP_BATCH {
                continue;
            }
            let record = entry.record.clone().seen_at(now, &[]);
            let (old, size) = entry.replace(record.clone());
            bytes = bytes - old + size;
            failed.push(record);
        }
        inner.bytes = bytes;
        failed
    }

    fn answer(&self, id: &str, answers: BTreeMap<String, Value>) {
        if let Some(entry) = self.lock().tasks.get_mut(id) {
            entry.answers.extend(answers);
        }
    }

    fn cancel(&self, id: &str) {
        if let Some(entry) = self.lock().tasks.get_mut(id) {
            entry.cancel = true;
        }
    }

    fn sweep(&self) -> Vec<Expired> {
        let mut inner = self.lock();
        inner.sweep(now_ms());
        let take = inner.expired.len().min(SWEEP_BATCH);
        inner.expired.drain(..take).collect()
    }

    fn control(&self, id: &str) -> Control {
        match self.lock().tasks.get_mut(id) {
            Some(entry) => Control {
                cancel: entry.cancel,
                answers: std::mem::take(&mut entry.answers),
            },
            None => Control::default(),
        }
    }
}

impl Entry {
    /// Replaces the record; returns the old size and the new.
    fn replace(&mut self, record: TaskRecord) -> (usize, usize) {
        let size = record.size();
        self.record = record;
        (std::mem::replace(&mut self.size, size), size)
    }
}

impl Inner {
    fn sweep(&mut self, now: u64) {
        let mut freed = 0;
        let expired = &mut self.expired;
        self.tasks.retain(|_, entry| {
            let keep = entry.record.expires_ms() > now;
            if !keep {
                freed += entry.size;
                expired.push(Expired {
                    id: entry.record.id.clone(),
                    plugin: entry.record.plugin.clone(),
                    tool: entry.record.tool.clone(),
                });
            }
            keep
        });
        self.bytes -= freed;
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::TaskStatus;

    use super::*;

    fn record(id: &str, caller: &str, ttl_ms: u64) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            caller: caller.into(),
            plugin: "p".into(),
            tool: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now_ms(),
            updated_ms: now_ms(),
            ttl_ms,
            poll_ms: 500,
            input_requests: None,
            result: None,
            error: None,
            replica: "r".into(),
            lease_until_ms: now_ms() + 5_000,
        }
    }

    #[test]
    fn expired_records_are_reported_once() {
        let store = MemoryStore::new(Bounds::default());
        let mut old = record("old", "alice", 1);
        old.created_ms = now_ms() - 10;
        store.create(&old).unwrap();
        store.create(&record("new", "alice", 60_000)).unwrap();
        let expired = store.sweep();
        assert_eq!(
            expired,
            [Expired {
                id: "old".into(),
                plugin: "p".into(),
                tool: "t".into()
            }]
        );
        assert!(store.sweep().is_empty(), "reported once");
        assert!(store.get("new").is_some());
    }

    #[test]
    fn a_caller_cannot_hold_more_than_its_share() {
        let store = MemoryStore::new(Bounds {
            per_caller: 2,
            total: 3,
            bytes: 1 << 20,
        });
        store.create(&record("a", "alice", 60_000)).unwrap();
        store.create(&record("b", "alice", 60_000)).unwrap();
        assert!(matches!(
            store.create(&record("c", "alice", 60_000)),
            Err(Refusal::Full(_))
        ));
        store.create(&record("d", "bob", 60_000)).unwrap();
        assert!(matches!(
            store.create(&record("e", "carol", 60_000)),
            Err(Refusal::Full(_))
        ));
    }

    #[test]
    fn expired_records_are_forgotten_and_free_their_room() {
        let store = MemoryStore::new(Bounds {
            per_caller: 1,
            total: 1,
            bytes: 1 << 20,
        });
        store.create(&record("a", "alice", 0)).unwrap();
        assert!(store.get("a").is_none());
        store.create(&record("b", "alice", 60_000)).unwrap();
        let inner = store.lock();
        assert_eq!(inner.bytes, inner.tasks["b"].size);
    }

    #[test]
    fn a_task_whose_lease_ran_out_is_written_failed_once_and_its_runner_locked_out() {
        let store = MemoryStore::new(Bounds::default());
        let now = now_ms();
        let mut orphan = record("orphan", "alice", 60_000);
        orphan.lease_until_ms = now - 1;
        orphan.replica = "warden-2".into();
        store.create(&orphan).unwrap();
        store.create(&record("alive", "alice", 60_000)).unwrap();
        let mut done = record("done", "alice", 60_000);
        done.lease_until_ms = now - 1;
        done.status = TaskStatus::Completed;
        store.create(&done).unwrap();

        let failed = store.fail_lapsed(now);
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].id, "orphan");
        assert_eq!(failed[0].status, TaskStatus::Failed);
        let message = failed[0].error.as_ref().unwrap()["message"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(message.contains("(`warden-2`) stopped before it finished"), "{message}");
        // Written, not only derived at read time: the stored record says so.
        let stored = store.get("orphan").unwrap().record;
        assert_eq!(stored.status, TaskStatus::Failed);
        assert_eq!(stored.error, failed[0].error);
        assert_eq!(store.get("done").unwrap().record.status, TaskStatus::Completed);
        assert_eq!(store.get("alive").unwrap().record.status, TaskStatus::Working);
        // Once: the next sweep finds nothing.
        assert!(store.fail_lapsed(now + 1).is_empty());
        // The runner that comes back cannot write `working` over it.
        let mut late = orphan.clone();
        late.lease_until_ms = now + 5_000;
        assert!(!store.put(&late));
        assert_eq!(store.get("orphan").unwrap().record.status, TaskStatus::Failed);
        assert!(store.put(&record("alive", "alice", 60_000)));
        let inner = store.lock();
        assert_eq!(inner.bytes, inner.tasks.values().map(|e| e.size).sum::<usize>());
    }

    #[test]
    fn answers_and_cancel_are_taken_by_the_runner() {
        let store = MemoryStore::new(Bounds::default());
        store.create(&record("a", "", 60_000)).unwrap();
        store.answer("a", BTreeMap::from([("k".to_string(), Value::Bool(true))]));
        assert_eq!(store.get("a").unwrap().answered, ["k"]);
        store.cancel("a");
        let control = store.control("a");
        assert!(control.cancel);
        assert_eq!(control.answers.len(), 1);
        assert!(store.control("a").answers.is_empty());
    }
}
