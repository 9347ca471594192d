//! One task this replica runs: its record (the runner is its only writer),
//! its lease, the questions it puts to the client, and how it ends.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{InputRequest, InputRequests, JsonObject, Task, TaskStatus};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::record::{INTERNAL_ERROR, TaskRecord, error_object, now_ms};
use super::store::{Put, Refusal};
use super::{HEARTBEAT, LEASE, TaskEventOf, Tasks};
use crate::interaction::{InputKind, TaskInput, answers};
use warden_runtime::contract::types;

/// How a task ended.
pub enum Finish {
    Completed(JsonObject),
    Failed(JsonObject),
    Cancelled,
}

/// How often the runner tries again to write an ending the store did not take.
const ENDING_RETRY: Duration = Duration::from_millis(250);

/// What became of a write of the record.
enum Saved {
    Written,
    /// The store could not be reached: the next write repeats it.
    Unreachable,
    /// Not tried: the task is closed, or its ending is being written.
    Skipped,
    /// The record is gone or ended by a sweep: the task is lost to this runner.
    Lost,
    /// The store ended the task `failed` (the record would not fit), for this reason.
    Ended(String),
}

/// The longest status message kept: it is shown to the client on every poll.
const MAX_STATUS_MESSAGE: usize = 512;

pub struct TaskDriver {
    tasks: Arc<Tasks>,
    id: String,
    caller: String,
    plugin: String,
    tool: String,
    principal: Option<String>,
    record: Mutex<TaskRecord>,
    started: AtomicBool,
    /// Finished or abandoned: nothing more is written.
    closed: AtomicBool,
    /// The call ended: only the write of its ending goes on.
    ending: AtomicBool,
    /// Held by each write of the record.
    writer: tokio::sync::Mutex<()>,
    /// The last write did not reach the store (said once an outage).
    unreachable: AtomicBool,
    cancel: CancellationToken,
    wake: Notify,
    /// Answers that arrived and no round has taken yet, by wire key.
    answers: Mutex<BTreeMap<String, Value>>,
    rounds: AtomicU32,
}

impl TaskDriver {
    /// A task not created yet: `draft` is its record-to-be.
    pub fn new(
        tasks: Arc<Tasks>,
        draft: TaskRecord,
        principal: Option<String>,
        cancel: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Self {
            tasks,
            id: draft.id.clone(),
            caller: draft.caller.clone(),
            plugin: draft.plugin.clone(),
            tool: draft.tool.clone(),
            principal,
            record: Mutex::new(draft),
            started: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            ending: AtomicBool::new(false),
            writer: tokio::sync::Mutex::new(()),
            unreachable: AtomicBool::new(false),
            cancel,
            wake: Notify::new(),
            answers: Mutex::new(BTreeMap::new()),
            rounds: AtomicU32::new(0),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn caller(&self) -> &str {
        &self.caller
    }

    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    pub fn cancel_now(&self) {
        self.cancel.cancel();
    }

    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Answers taken from the store and not yet handed to a round.
    #[cfg(test)]
    pub(crate) fn buffered_answers(&self) -> usize {
        self.answers.lock().expect("answers lock").len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TaskRecord> {
        self.record.lock().expect("task record lock")
    }

    /// Creates the task, running (`None`) or already ended: stored — visible
    /// to every replica — before the client hears of it.
    pub async fn create(self: &Arc<Self>, ended: Option<Finish>) -> Result<Task, McpError> {
        let now = now_ms();
        let running = ended.is_none();
        let record = {
            let mut record = self.lock();
            record.created_ms = now;
            record.updated_ms = now;
            record.lease_until_ms = now + LEASE.as_millis() as u64;
            if let Some(ended) = ended {
                apply(&mut record, ended);
            }
            record.clone()
        };
        if running {
            self.tasks
                .admit(self)
                .map_err(|why| McpError::internal_error(format!("the call cannot become a task: {why}"), None))?;
        }
        if let Err(refusal) = self.tasks.store().create(&record).await {
            if running {
                self.tasks.release(&self.id);
            }
            let why = match refusal {
                Refusal::Full(why) => why,
                Refusal::Unavailable(error) => format!("the task store is unavailable: {error:#}"),
            };
            return Err(McpError::internal_error(
                format!("the call cannot become a task: {why}"),
                None,
            ));
        }
        self.started.store(running, Ordering::SeqCst);
        self.event("created", None);
        if !running {
            self.closed.store(true, Ordering::SeqCst);
            self.event(record.status_name(), None);
        }
        Ok(record.task())
    }

    /// Writes the record, renewing the lease. One write at a time, so a
    /// heartbeat never races the write that ends the task; once the ending
    /// is under way (`ending`), only it writes.
    async fn save(&self, ending: bool) -> Saved {
        let _writing = self.writer.lock().await;
        if self.closed.load(Ordering::SeqCst) || (!ending && self.ending.load(Ordering::SeqCst)) {
            return Saved::Skipped;
        }
        let record = {
            let mut record = self.lock();
            record.lease_until_ms = now_ms() + LEASE.as_millis() as u64;
            record.clone()
        };
        let put = self.tasks.store().put(&record).await;
        if put.is_ok() && self.unreachable.swap(false, Ordering::SeqCst) {
            tracing::info!(plugin = %self.plugin, "reached the task store again");
        }
        match put {
            Ok(Put::Written) => Saved::Written,
            Ok(Put::Lost) => Saved::Lost,
            Ok(Put::Ended(failed)) => {
                let why = failed
                    .error
                    .as_ref()
                    .and_then(|e| e.get("message")?.as_str())
                    .unwrap_or("the task store ended the task")
                    .to_string();
                *self.lock() = *failed;
                Saved::Ended(why)
            }
            Err(error) => {
                // Said once an outage: every heartbeat of every task meets it.
                if !self.unreachable.swap(true, Ordering::SeqCst) {
                    tracing::warn!(plugin = %self.plugin, "cannot write a task record (trying again): {error:#}");
                }
                Saved::Unreachable
            }
        }
    }

    /// Nothing more is written; the task leaves this replica's running set.
    /// False if it was closed already.
    fn close(&self) -> bool {
        if self.closed.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.tasks.release(&self.id);
        true
    }

    /// The store ended the task (its record would not fit): the call stops,
    /// and the ending is reported once, with the store's reason.
    fn ended_by_store(&self, why: &str) {
        if !self.close() {
            return;
        }
        tracing::warn!(plugin = %self.plugin, "a task ended failed: {why}");
        self.cancel.cancel();
        self.event("failed", Some(why));
    }

    /// Takes what arrived through the store: a cancel request, answers.
    async fn poll(&self) {
        match self.tasks.store().control(&self.id).await {
            Ok(control) => {
                if control.cancel {
                    self.cancel.cancel();
                }
                if !control.answers.is_empty() {
                    // Only what is asked now: an answer that comes after its
                    // round ended would otherwise stay here until the task
                    // ends, unbounded across rounds.
                    let asked: Vec<String> = self
                        .lock()
                        .input_requests
                        .as_ref()
                        .map(|asked| asked.keys().cloned().collect())
                        .unwrap_or_default();
                    let now_asked = control.answers.into_iter().filter(|(key, _)| asked.contains(key));
                    self.answers.lock().expect("answers lock").extend(now_asked);
                }
            }
            Err(error) => tracing::debug!(plugin = %self.plugin, "cannot read a task's control: {error:#}"),
        }
    }

    /// Every `HEARTBEAT` while the task runs (`spawn_heartbeat`). A store out
    /// of reach is tried again at the next one, the call going on meanwhile;
    /// a runner whose record a sweep ended (its lease ran out while the store
    /// was reachable) has lost the task: it stops the call and writes
    /// nothing more.
    pub async fn heartbeat(&self) {
        if !self.started.load(Ordering::SeqCst) || self.closed.load(Ordering::SeqCst) {
            return;
        }
        self.poll().await;
        self.wake.notify_one();
        match self.save(false).await {
            Saved::Lost => {
                if self.close() {
                    tracing::error!(plugin = %self.plugin, "lost the lease on a task: stopping it");
                    self.cancel.cancel();
                }
            }
            Saved::Ended(why) => self.ended_by_store(&why),
            Saved::Written | Saved::Unreachable | Saved::Skipped => {}
        }
    }

    /// Heartbeats on a task of their own until the task ends: a store that
    /// answers slowly, or not at all, never holds up the call.
    pub fn spawn_heartbeat(self: &Arc<Self>) {
        let driver = self.clone();
        tokio::spawn(async move {
            let mut beat = tokio::time::interval(HEARTBEAT);
            beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                beat.tick().await;
                if driver.closed.load(Ordering::SeqCst) || driver.ending.load(Ordering::SeqCst) {
                    return;
                }
                driver.heartbeat().await;
            }
        });
    }

    /// The latest progress or log line, for `statusMessage` (written with
    /// the next heartbeat).
    pub fn status_message(&self, text: String) {
        let text: String = text
            .chars()
            .filter(|c| !c.is_control())
            .take(MAX_STATUS_MESSAGE)
            .collect();
        self.lock().status_message = Some(text);
    }

    /// The call ended. The ending is audited once, after the store has it:
    /// while the store is out of reach it is tried again (the record says
    /// `working` meanwhile, and no replica judges its lease until the store
    /// is back), until the record would have expired anyway.
    pub async fn finish(&self, ended: Finish) {
        if self.closed.load(Ordering::SeqCst) || self.ending.swap(true, Ordering::SeqCst) {
            return;
        }
        let (status, expires) = {
            let mut record = self.lock();
            apply(&mut record, ended);
            (record.status_name(), record.expires_ms())
        };
        loop {
            match self.save(true).await {
                Saved::Written => {
                    if self.close() {
                        self.event(status, None);
                    }
                    return;
                }
                // Not written: a sweep wrote (and reported) `failed` already,
                // or shutdown abandoned it.
                Saved::Lost | Saved::Skipped => {
                    self.close();
                    return;
                }
                Saved::Ended(why) => return self.ended_by_store(&why),
                Saved::Unreachable if now_ms() >= expires => {
                    tracing::error!(plugin = %self.plugin, "the task store was out of reach until the task's record expired: its ending is lost");
                    self.close();
                    return;
                }
                Saved::Unreachable => tokio::time::sleep(ENDING_RETRY).await,
            }
        }
    }

    /// Shutdown cannot wait for it: it fails, saying why (one try: a store
    /// out of reach leaves it to the lease, which then runs out).
    pub async fn abandon(&self, why: &str) {
        if self.closed.load(Ordering::SeqCst) || self.ending.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let mut record = self.lock();
            apply(&mut record, Finish::Failed(error_object(INTERNAL_ERROR, why)));
        }
        let saved = self.save(true).await;
        self.cancel.cancel();
        match saved {
            Saved::Written if self.close() => self.event("failed", Some(why)),
            Saved::Ended(reason) => self.ended_by_store(&reason),
            _ => {
                self.close();
            }
        }
    }

    async fn set_status(&self, status: TaskStatus, requests: Option<InputRequests>) {
        {
            let mut record = self.lock();
            record.status = status;
            record.input_requests = requests;
            record.updated_ms = now_ms();
        }
        if let Saved::Ended(why) = self.save(false).await {
            return self.ended_by_store(&why);
        }
        self.event(self.lock().status_name(), None);
    }

    fn event(&self, event: &'static str, detail: Option<&str>) {
        self.tasks.event(
            TaskEventOf {
                id: &self.id,
                plugin: &self.plugin,
                tool: &self.tool,
                principal: self.principal.as_deref(),
            },
            event,
            detail,
        );
    }

    async fn ask_round(
        &self,
        requests: BTreeMap<String, (InputKind, InputRequest)>,
        deadline: tokio::time::Instant,
        cancel: &CancellationToken,
    ) -> Vec<types::KeyedAnswer> {
        // Keys are unique over the task's life: a later round may reuse the
        // plugin's own keys.
        let round = self.rounds.fetch_add(1, Ordering::SeqCst) + 1;
        let mut pending = BTreeMap::new();
        let mut asked = InputRequests::new();
        for (key, (kind, request)) in requests {
            let wire = format!("{round}.{key}");
            pending.insert(wire.clone(), (key, kind));
            asked.insert(wire, request);
        }
        self.set_status(TaskStatus::InputRequired, Some(asked)).await;
        let mut answered = Vec::new();
        loop {
            let arrived: Vec<(String, Value)> = {
                let mut answers = self.answers.lock().expect("answers lock");
                pending
                    .keys()
                    .filter_map(|k| Some((k.clone(), answers.remove(k)?)))
                    .collect()
            };
            if !arrived.is_empty() {
                for (wire, value) in arrived {
                    let Some((key, kind)) = pending.remove(&wire) else {
                        continue;
                    };
                    let answer = answers::parse_answer(kind, &value).unwrap_or_else(|why| {
                        types::InputAnswer::Refused(format!("the client's answer is malformed: {why}"))
                    });
                    answered.push(types::KeyedAnswer { key, answer });
                }
                if pending.is_empty() {
                    self.set_status(TaskStatus::Working, None).await;
                    return answered;
                }
                {
                    let mut record = self.lock();
                    if let Some(requests) = record.input_requests.as_mut() {
                        requests.retain(|key, _| pending.contains_key(key));
                    }
                }
                if let Saved::Ended(why) = self.save(false).await {
                    self.ended_by_store(&why);
                }
            }
            let why = tokio::select! {
                () = self.wake.notified() => None,
                () = tokio::time::sleep(HEARTBEAT) => None,
                () = tokio::time::sleep_until(deadline) => Some("the client did not answer in time"),
                () = cancel.cancelled() => Some("the task was cancelled"),
            };
            match why {
                None => self.poll().await,
                Some(why) => {
                    answered.extend(pending.into_values().map(|(key, _)| types::KeyedAnswer {
                        key,
                        answer: types::InputAnswer::Refused(why.into()),
                    }));
                    self.set_status(TaskStatus::Working, None).await;
                    return answered;
                }
            }
        }
    }
}

fn apply(record: &mut TaskRecord, ended: Finish) {
    record.input_requests = None;
    record.updated_ms = now_ms();
    match ended {
        Finish::Completed(result) => {
            record.status = TaskStatus::Completed;
            record.result = Some(result);
        }
        Finish::Failed(error) => {
            record.status = TaskStatus::Failed;
            record.error = Some(error);
        }
        Finish::Cancelled => record.status = TaskStatus::Cancelled,
    }
}

impl TaskInput for TaskDriver {
    fn started(&self) -> bool {
        self.started.load(Ordering::SeqCst)
    }

    fn ask_all<'a>(
        &'a self,
        requests: BTreeMap<String, (InputKind, InputRequest)>,
        deadline: tokio::time::Instant,
        cancel: &'a CancellationToken,
    ) -> Pin<Box<dyn Future<Output = Vec<types::KeyedAnswer>> + Send + 'a>> {
        Box::pin(self.ask_round(requests, deadline, cancel))
    }
}
