//! Where task records live: in this process (the default), or in Redis
//! (`--task-store redis://…`) so that every replica answers for every task.
//!
//! Three things per task, so that only one writer ever writes each: the
//! record (written by the replica running the task), the answers clients
//! sent through `tasks/update`, and whether `tasks/cancel` was asked (both
//! written by whichever replica took the request, and taken by the runner).

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::Value;

use super::memory_store::MemoryStore;
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
    /// Bytes of records in all (results and answers included), in this
    /// process; checked at every write, not only when a task is created.
    pub bytes: usize,
    /// Bytes of one caller's records: a caller that fills its share leaves
    /// the rest of `bytes` to the others.
    pub per_caller_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            per_caller: 256,
            total: 4096,
            bytes: 64 << 20,
            per_caller_bytes: 16 << 20,
        }
    }
}

/// What became of the runner's write of its record.
#[derive(Debug)]
pub enum Put {
    Written,
    /// Not written: the record is gone, or already ended — by a sweep that
    /// found the runner's lease run out (`fail_lapsed`), so the runner has
    /// lost the task.
    Lost,
    /// Not written: it would have taken the store past a bound, so the store
    /// ended the task `failed` instead, with this record, saying why.
    Ended(Box<TaskRecord>),
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

/// Tasks one round of a sweep takes; a sweep goes round until it has
/// caught up, or `SWEEP_BUDGET` is spent.
pub const SWEEP_BATCH: usize = 256;
/// How long one sweep of expired tasks may go on.
pub const SWEEP_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);
/// Expired tasks waiting for their `expired` event, at most: past it the
/// oldest are counted instead (`Swept::unreported`), never held.
pub const MAX_UNREPORTED: usize = 16_384;

/// What one sweep of expired tasks found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// Each reported once, by one replica.
    pub expired: Vec<Expired>,
    /// Past `MAX_UNREPORTED`: expired without an event of their own.
    pub unreported: usize,
}

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
    pub async fn sweep(&self) -> Result<Swept> {
        match self {
            TaskStore::Memory(store) => Ok(store.sweep()),
            TaskStore::Redis(store) => store.health.noted(store.sweep(), Result::is_err).await,
        }
    }

    /// Stores a new record; it is there for every replica when this returns.
    pub async fn create(&self, record: &TaskRecord) -> Result<(), Refusal> {
        match self {
            TaskStore::Memory(store) => store.create(record),
            TaskStore::Redis(store) => {
                let unavailable = |r: &Result<(), Refusal>| matches!(r, Err(Refusal::Unavailable(_)));
                store.health.noted(store.create(record), unavailable).await
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Seen>> {
        match self {
            TaskStore::Memory(store) => Ok(store.get(id)),
            TaskStore::Redis(store) => store.health.noted(store.get(id), Result::is_err).await,
        }
    }

    /// The runner's write of its record (see `Put`).
    pub async fn put(&self, record: &TaskRecord) -> Result<Put> {
        match self {
            TaskStore::Memory(store) => Ok(store.put(record)),
            TaskStore::Redis(store) => store.health.noted(store.put(record), Result::is_err).await,
        }
    }

    /// Writes `failed` into the records of unfinished tasks whose runner's
    /// lease ran out (its replica died or stalled) and returns them as
    /// written: each is written, and returned, by one sweep only.
    pub async fn fail_lapsed(&self) -> Result<Vec<TaskRecord>> {
        match self {
            TaskStore::Memory(store) => Ok(store.fail_lapsed(now_ms())),
            // A lease that ran out while the store was out of reach is no sign
            // of its runner: judged once the store has been reachable a whole lease.
            TaskStore::Redis(store) if !store.health.judges_leases(now_ms()) => Ok(Vec::new()),
            TaskStore::Redis(store) => store.health.noted(store.fail_lapsed(), Result::is_err).await,
        }
    }

    /// Answers for the task's outstanding questions (checked by the caller).
    /// `expires_ms`: the task's own expiry, which these expire with.
    pub async fn answer(&self, id: &str, answers: BTreeMap<String, Value>, expires_ms: u64) -> Result<(), Refusal> {
        match self {
            TaskStore::Memory(store) => store.answer(id, answers).map_err(Refusal::Full),
            TaskStore::Redis(store) => store
                .health
                .noted(store.answer(id, answers, expires_ms), Result::is_err)
                .await
                .map_err(Refusal::Unavailable),
        }
    }

    /// Asks the runner to cancel; true the first time it is asked.
    pub async fn cancel(&self, id: &str, expires_ms: u64) -> Result<bool> {
        match self {
            TaskStore::Memory(store) => Ok(store.cancel(id)),
            TaskStore::Redis(store) => store.health.noted(store.cancel(id, expires_ms), Result::is_err).await,
        }
    }

    /// Takes what arrived for the runner.
    pub async fn control(&self, id: &str) -> Result<Control> {
        match self {
            TaskStore::Memory(store) => Ok(store.control(id)),
            TaskStore::Redis(store) => store.health.noted(store.control(id), Result::is_err).await,
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
