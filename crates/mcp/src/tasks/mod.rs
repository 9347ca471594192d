//! MCP tasks (SEP-2663, `io.modelcontextprotocol/tasks`) for plugin tool
//! calls on the 2026-07-28 wire.
//!
//! A call becomes a task only where the operator's `[tasks]` allows it, only
//! for a client that declared the extension in the request's `_meta`, and
//! only once it outlives a short immediate window (a call that finishes, or
//! asks for input, within it is answered as an ordinary call — the spec's
//! immediate-result shortcut, and how input gathered before a task exists
//! composes with it). A `required` tool's call is always answered with a
//! task. The task keeps running on the replica that started it, which holds
//! a lease on it in the store; any replica answers `tasks/*` from the store.
//!
//! - `record`: a task as stored and as `tasks/get` shows it;
//! - `store`: where records live (this process: `memory_store`, or Redis:
//!   `redis_store`);
//! - `driver`: one running task — its record, lease, questions and status.
//!
//! The task-call module runs a tool call as a (possible) task.

pub mod driver;
pub mod health;
pub mod memory_store;
pub mod record;
pub mod redis_store;
pub mod store;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{GetTaskResult, InputResponses};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::interaction::SharedUses;
use driver::TaskDriver;
use record::TaskRecord;
use store::{Bounds, MAX_UNREPORTED, Refusal, Swept, TaskStore};
use warden_runtime::audit::{self, TaskEvent};
use warden_runtime::audit_log::AuditLog;

/// How long a call may run before it becomes a task.
pub const IMMEDIATE_WINDOW: Duration = Duration::from_millis(100);
/// How often a runner renews its lease and looks for cancel requests and
/// answers that reached another replica.
pub const HEARTBEAT: Duration = Duration::from_millis(500);
/// How long a lease holds without renewal: a replica that stopped this long
/// ago has lost its tasks.
pub const LEASE: Duration = Duration::from_secs(5);
/// How often a client is asked to poll `tasks/get`.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Tasks one caller may have running on one replica at once.
pub const MAX_RUNNING_PER_CALLER: usize = 16;
/// How often tasks whose lease ran out are looked for (`Tasks::sweep`).
pub const SWEEP_EVERY: Duration = Duration::from_secs(5);
/// How often expired tasks are looked for: each `expired` event is written
/// within this (and a sweep's budget) of its task's `ttlMs`.
pub const EXPIRY_SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Which task an event is about.
pub(crate) struct TaskEventOf<'a> {
    pub id: &'a str,
    pub plugin: &'a str,
    pub tool: &'a str,
    pub principal: Option<&'a str>,
}

/// Tasks running on one replica at once.
pub const MAX_RUNNING: usize = 256;

/// Every task of one Warden: the store, and the tasks this replica runs.
pub struct Tasks {
    store: TaskStore,
    /// This replica's name, in records (`--replica-id`, else the host name).
    replica: String,
    running: Mutex<HashMap<String, Arc<TaskDriver>>>,
    draining: AtomicBool,
    audit: Option<Arc<AuditLog>>,
}

impl Tasks {
    pub fn new(store: TaskStore, replica: String, audit: Option<Arc<AuditLog>>) -> Self {
        Self {
            store,
            replica,
            running: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            audit,
        }
    }

    /// The embedded store, bounded by the defaults.
    pub fn in_memory(replica: String, audit: Option<Arc<AuditLog>>) -> Self {
        Self::new(TaskStore::memory(Bounds::default()), replica, audit)
    }

    /// Counts a task's event in the metrics and writes it to the audit log.
    pub(crate) fn event(&self, of: TaskEventOf<'_>, event: &'static str, detail: Option<&str>) {
        if let Some(metrics) = warden_runtime::metrics::get() {
            metrics.task_event(of.plugin, event);
        }
        let Some(log) = self.audit.as_deref() else { return };
        // The id is a bearer secret: the log names it by a digest.
        let digest = Sha256::digest(of.id.as_bytes());
        let task: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        log.record(&TaskEvent {
            time: audit::now(),
            task: &task,
            plugin: of.plugin,
            tool: of.tool,
            principal: of.principal,
            task_event: event,
            replica: &self.replica,
            detail,
        });
    }

    /// Writes `failed` into the tasks whose runner's lease ran out (its
    /// replica died) and reports them, then the tasks whose `ttlMs` ended
    /// (`expired`): each once, by one replica's sweep (`spawn_sweeper` runs
    /// them on their own schedules). Returns how many of each it reported.
    pub async fn sweep(&self) -> (usize, usize) {
        (self.fail_lapsed().await, self.sweep_expired().await)
    }

    async fn fail_lapsed(&self) -> usize {
        match self.store.fail_lapsed().await {
            Ok(failed) => {
                for task in &failed {
                    let of = TaskEventOf {
                        id: &task.id,
                        plugin: &task.plugin,
                        tool: &task.tool,
                        principal: principal_of(&task.caller),
                    };
                    let why = task.error.as_ref().and_then(|e| e.get("message")?.as_str());
                    self.event(of, "failed", why);
                }
                failed.len()
            }
            Err(error) => {
                tracing::warn!("cannot sweep tasks whose lease ran out: {error:#}");
                0
            }
        }
    }

    async fn sweep_expired(&self) -> usize {
        match self.store.sweep().await {
            Ok(Swept { expired, unreported }) => {
                if unreported > 0 {
                    self.unreported(unreported);
                }
                for task in &expired {
                    let of = TaskEventOf {
                        id: &task.id,
                        plugin: &task.plugin,
                        tool: &task.tool,
                        principal: None,
                    };
                    self.event(of, "expired", None);
                }
                expired.len()
            }
            Err(error) => {
                tracing::warn!("cannot sweep expired tasks: {error:#}");
                0
            }
        }
    }

    /// Expired tasks past the backlog's bound (`MAX_UNREPORTED`): one audit
    /// line and metric for all of them, instead of memory for each.
    fn unreported(&self, count: usize) {
        tracing::warn!("{count} expired tasks were past the backlog of {MAX_UNREPORTED}: reported together");
        if let Some(metrics) = warden_runtime::metrics::get() {
            for _ in 0..count {
                metrics.task_event("", "expired_unreported");
            }
        }
        let Some(log) = self.audit.as_deref() else { return };
        let detail = format!(
            "{count} tasks expired past the backlog of {MAX_UNREPORTED} awaiting their events: not reported one by one"
        );
        log.record(&TaskEvent {
            time: audit::now(),
            task: "",
            plugin: "",
            tool: "",
            principal: None,
            task_event: "expired_unreported",
            replica: &self.replica,
            detail: Some(&detail),
        });
    }

    /// Sweeps in the background for as long as `tasks` lives elsewhere:
    /// expired tasks every `EXPIRY_SWEEP_EVERY`, lapsed leases every
    /// `SWEEP_EVERY`.
    pub fn spawn_sweeper(tasks: &Arc<Tasks>) {
        let weak = Arc::downgrade(tasks);
        let lapsed_every = (SWEEP_EVERY.as_millis() / EXPIRY_SWEEP_EVERY.as_millis()).max(1) as u64;
        tokio::spawn(async move {
            let mut every = tokio::time::interval(EXPIRY_SWEEP_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            for round in 0u64.. {
                every.tick().await;
                let Some(tasks) = weak.upgrade() else { return };
                if round % lapsed_every == 0 {
                    tasks.fail_lapsed().await;
                }
                tasks.sweep_expired().await;
            }
        });
    }

    pub(crate) fn store(&self) -> &TaskStore {
        &self.store
    }

    pub(crate) fn replica(&self) -> &str {
        &self.replica
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<TaskDriver>>> {
        self.running.lock().expect("running tasks lock")
    }

    /// Registers a task this replica now runs, within the bounds.
    pub(crate) fn admit(&self, driver: &Arc<TaskDriver>) -> Result<(), String> {
        let mut running = self.running();
        if self.draining.load(Ordering::SeqCst) {
            return Err("this Warden is shutting down and takes no new tasks; call again".into());
        }
        if running.len() >= MAX_RUNNING {
            return Err(format!(
                "this Warden runs {MAX_RUNNING} tasks already; call again later"
            ));
        }
        let caller = driver.caller();
        let mine = running.values().filter(|d| d.caller() == caller).count();
        if mine >= MAX_RUNNING_PER_CALLER {
            return Err(format!(
                "this caller has {mine} tasks running already (at most {MAX_RUNNING_PER_CALLER}); wait for one to finish"
            ));
        }
        running.insert(driver.id().to_string(), driver.clone());
        if let Some(metrics) = warden_runtime::metrics::get() {
            metrics.task_running(driver.plugin(), 1);
        }
        Ok(())
    }

    pub(crate) fn release(&self, id: &str) {
        if let Some(driver) = self.running().remove(id)
            && let Some(metrics) = warden_runtime::metrics::get()
        {
            metrics.task_running(driver.plugin(), -1);
        }
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Shutdown begins: no new task is taken.
    pub fn stop_taking(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Shutdown's grace ran out: every task still running here fails, with
    /// a record that says so, before the process ends.
    pub async fn fail_running(&self, why: &str) -> usize {
        let drivers: Vec<_> = self.running().values().cloned().collect();
        for driver in &drivers {
            driver.abandon(why).await;
        }
        drivers.len()
    }

    /// The record `id` as `caller` may see it: anyone else's task is unknown.
    async fn seen(&self, id: &str, caller: &str) -> Result<TaskRecord, McpError> {
        let unknown = || McpError::invalid_params(format!("no task `{}`", shorten(id)), Some(json!({ "taskId": id })));
        let seen = self
            .store
            .get(id)
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(unknown)?;
        if seen.record.caller != caller {
            return Err(unknown());
        }
        // Shown as written: a lapsed lease becomes `failed` only when a sweep
        // writes it (`health` decides when one may). A read cannot judge it:
        // a store that answers reads while it holds writes (paused, or a
        // replica cut off from it) would show a live task ended, and a
        // client stops polling at an ending.
        Ok(seen.record.seen_at(0, &seen.answered))
    }

    /// `tasks/get`.
    pub async fn get(&self, id: &str, caller: &str) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.seen(id, caller).await?.detailed()))
    }

    /// `tasks/update`: answers to outstanding questions are kept for the
    /// runner; answers to anything else are ignored, as the spec says.
    pub async fn update(&self, id: &str, caller: &str, responses: InputResponses) -> Result<(), McpError> {
        let record = self.seen(id, caller).await?;
        let expires = record.expires_ms();
        let outstanding = record.input_requests.unwrap_or_default();
        let answers: BTreeMap<_, _> = responses
            .into_iter()
            .filter(|(key, _)| outstanding.contains_key(key))
            .collect();
        if answers.is_empty() {
            return Ok(());
        }
        self.store
            .answer(id, answers, expires)
            .await
            .map_err(|refusal| match refusal {
                Refusal::Full(why) => McpError::internal_error(format!("the answers were not kept: {why}"), None),
                Refusal::Unavailable(error) => unavailable(&error),
            })?;
        let local = self.running().get(id).cloned();
        if let Some(driver) = local {
            driver.wake();
        }
        Ok(())
    }

    /// `tasks/cancel`: acknowledged at once; the task settles `cancelled`
    /// once its runner has stopped the call. A finished task stays as it is.
    pub async fn cancel(&self, id: &str, caller: &str) -> Result<(), McpError> {
        let record = self.seen(id, caller).await?;
        if record.is_terminal() {
            return Ok(());
        }
        // Audited once a task, by the replica that asked first: a client
        // repeating `tasks/cancel` writes nothing more.
        let first = self
            .store
            .cancel(id, record.expires_ms())
            .await
            .map_err(|e| unavailable(&e))?;
        if first {
            let of = TaskEventOf {
                id,
                plugin: &record.plugin,
                tool: &record.tool,
                principal: principal_of(caller),
            };
            self.event(of, "cancel_requested", None);
        }
        let local = self.running().get(id).cloned();
        if let Some(driver) = local {
            driver.cancel_now();
        }
        Ok(())
    }
}

/// With a shared store, interactive `requestState`s are recorded there too.
impl SharedUses for Tasks {
    fn use_once<'a>(
        &'a self,
        digest: [u8; 32],
        ttl: Duration,
    ) -> Pin<Box<dyn Future<Output = anyhow::Result<bool>> + Send + 'a>> {
        Box::pin(async move {
            match self.store.use_once(&digest, ttl.as_millis() as u64).await {
                Some(used) => used,
                None => Ok(true),
            }
        })
    }
}

impl Tasks {
    /// Whether replicas share this store (Redis).
    pub fn is_shared(&self) -> bool {
        matches!(self.store, TaskStore::Redis(_))
    }
}

/// The OAuth subject a caller identity names (`caller_identity`), for the
/// audit log; none without OAuth.
fn principal_of(caller: &str) -> Option<&str> {
    caller.strip_prefix("oauth-sub:")
}

fn unavailable(error: &anyhow::Error) -> McpError {
    tracing::error!("task store: {error:#}");
    McpError::internal_error(format!("the task store is unavailable: {error:#}"), None)
}

/// An id as a message quotes it: a client may send anything.
fn shorten(id: &str) -> String {
    let printable: String = id.chars().filter(|c| !c.is_control()).take(64).collect();
    if printable.len() < id.len() {
        format!("{printable}…")
    } else {
        printable
    }
}

/// A fresh task id: 256 bits from the OS, so it cannot be guessed.
pub(crate) fn new_id() -> Result<String, McpError> {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| McpError::internal_error(format!("no randomness for a task id: {e}"), None))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod redis_tests;
#[cfg(test)]
mod tests;
