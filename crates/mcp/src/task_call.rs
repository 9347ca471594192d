//! A tool call that may become an MCP task (see `tasks`): it runs in the
//! background from the start. If it ends, or asks for input, within the
//! immediate window it is answered as an ordinary call (a `required` tool's
//! end is still answered with a task, already finished); otherwise it
//! becomes a task, stored before the client hears of it, and runs on with
//! the task's time limit, its questions put through the task.

use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CreateTaskResult, InputResponses, TaskStatus};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::errors;
use crate::interaction::{Asker, Retry, Wire};
use crate::invocation::{Ended, Invocation};
use crate::logging::Level;
use crate::principal::Principal;
use crate::resolve;
use crate::shared::Shared;
use crate::tasks::driver::{Finish, TaskDriver};
use crate::tasks::record::{INTERNAL_ERROR, TaskRecord, error_object, now_ms};
use crate::tasks::{self, IMMEDIATE_WINDOW, POLL_INTERVAL};
use crate::tool_call::{self, Arguments};
use crate::trace_context::TraceParent;
use warden_plugins::catalog::Catalog;
use warden_runtime::audit::Outcome;
use warden_runtime::grants::Asks;
use warden_runtime::task_policy::TaskSupport;
use warden_runtime::{CallContext, CallReport, GuestEvent, sandbox::EVENT_BACKLOG};

/// Everything a task-capable call needs, owned: it outlives the request.
pub(crate) struct TaskCall {
    pub shared: Arc<Shared>,
    pub catalog: Arc<Catalog>,
    pub name: String,
    pub arguments: Arguments,
    pub support: TaskSupport,
    pub caller: String,
    pub principal: Option<Arc<Principal>>,
    pub trace: Option<TraceParent>,
    /// What the client declared it can be asked.
    pub client: Asks,
    pub responses: Option<InputResponses>,
    pub state: Option<String>,
}

/// Starts the call; answers once it ended, asked, or became a task.
pub(crate) async fn start(call: TaskCall) -> Result<CallToolResponse, McpError> {
    let (answer, answered) = oneshot::channel();
    tokio::spawn(call.run(answer));
    answered
        .await
        .unwrap_or_else(|_| Err(McpError::internal_error("the task runner stopped unexpectedly", None)))
}

type Answer = oneshot::Sender<Result<CallToolResponse, McpError>>;

impl TaskCall {
    async fn run(self, answer: Answer) {
        let shared = &self.shared;
        let Some((entry, request)) = resolve::tool(&self.catalog, &self.name) else {
            let _ = answer.send(Err(errors::unknown_tool(&self.name)));
            return;
        };
        let (plugin, decl) = (&entry.plugin, entry.decl());
        let settings = &plugin.prepared.settings;
        let policy = &settings.tasks;
        let id = match tasks::new_id() {
            Ok(id) => id,
            Err(error) => {
                let _ = answer.send(Err(error));
                return;
            }
        };
        let now = now_ms();
        let draft = TaskRecord {
            id,
            caller: self.caller.clone(),
            plugin: plugin.name.to_string(),
            tool: decl.tool.name.to_string(),
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: (policy.timeout + policy.keep).as_millis() as u64,
            poll_ms: POLL_INTERVAL.as_millis() as u64,
            input_requests: None,
            result: None,
            error: None,
            replica: shared.tasks.replica().to_string(),
            lease_until_ms: 0,
        };
        let cancel = CancellationToken::new();
        let principal = self.principal.as_ref().map(|p| p.subject.clone());
        let driver = TaskDriver::new(shared.tasks.clone(), draft, principal, cancel.clone());
        let asker = Asker {
            wire: Wire::Task(driver.clone()),
            client: self.client,
            grant: &settings.grants.interaction,
            codec: &shared.state_codec,
            cancel: cancel.clone(),
            timeout: policy.timeout,
            output: settings.limits.output,
            manifest: plugin.manifest_name(),
            caller: self.caller.clone(),
            used: &shared.used_states,
        };
        let (events, received) = mpsc::channel(EVENT_BACKLOG);
        tokio::spawn(status_messages(driver.clone(), received));
        let call = CallContext {
            plugin: plugin.name.clone(),
            events: Some(events),
            cancel: cancel.clone(),
            asks: Default::default(),
            timeout: Some(policy.timeout),
            prepare_next: true,
        };
        let started = Instant::now();
        let invocation = Invocation::start(
            shared.audit.as_deref(),
            request,
            self.principal.as_deref(),
            self.trace.clone(),
            self.arguments.json.len(),
            started,
        );
        if let Err(error) = invocation.admit() {
            let _ = answer.send(Err(error));
            return;
        }
        let _running = shared.in_flight.enter();
        let retry = Retry {
            responses: self.responses.as_ref(),
            state: self.state.as_deref(),
        };
        let run = tool_call::run(
            &shared.runtime,
            plugin,
            decl,
            &self.name,
            &self.arguments,
            call,
            started,
            &asker,
            retry,
        );
        // One bound on the whole task, its rounds and its waits together.
        let timeout = policy.timeout;
        let run = async move {
            tokio::time::timeout(timeout, run).await.unwrap_or_else(|_| Ended {
                answer: Ok(tool_call::error_result(format!(
                    "the task ran past its time limit of {} (`[tasks] timeout` in the manifest)",
                    humantime::format_duration(timeout)
                ))
                .into()),
                outcome: Outcome::Timeout,
                detail: None,
                timing: None,
                report: CallReport::default(),
            })
        };
        tokio::pin!(run);
        let early = tokio::select! {
            ended = &mut run => Some(ended),
            () = tokio::time::sleep(IMMEDIATE_WINDOW) => None,
        };
        if let Some(ended) = early {
            invocation.record(ended.outcome, ended.facts());
            let response = match (self.support, ended.answer) {
                // Input needed before the task exists goes back as an
                // input-required result; the task starts on a later round.
                (_, Ok(CallToolResponse::InputRequired(asked))) => Ok(CallToolResponse::InputRequired(asked)),
                (TaskSupport::Required, answer) => driver
                    .create(Some(finish(ended.outcome, answer)))
                    .await
                    .map(|task| CallToolResponse::Task(CreateTaskResult::new(task))),
                (_, answer) => answer,
            };
            let _ = answer.send(response);
            return;
        }
        match driver.create(None).await {
            Ok(task) => {
                let _ = answer.send(Ok(CallToolResponse::Task(CreateTaskResult::new(task))));
            }
            Err(error) => {
                // Not a task, and not waited for: the call stops here.
                let _ = answer.send(Err(error));
                cancel.cancel();
                let ended = run.await;
                invocation.record(ended.outcome, ended.facts());
                return;
            }
        }
        // Heartbeats go on beside the call, never in its way.
        driver.spawn_heartbeat();
        let ended = run.await;
        invocation.record(ended.outcome, ended.facts());
        // Cancelled: whether the guest stopped on its own (`host.cancelled()`)
        // or was interrupted, the task is `cancelled`.
        let outcome = if cancel.is_cancelled() {
            Outcome::Cancelled
        } else {
            ended.outcome
        };
        driver.finish(finish(outcome, ended.answer)).await;
    }
}

/// How a task ends, from how its call ended. A tool's own failure is a
/// result (`isError`): `completed`, as the spec says; `failed` is for a
/// JSON-RPC error.
fn finish(outcome: Outcome, answer: Result<CallToolResponse, McpError>) -> Finish {
    if outcome == Outcome::Cancelled {
        return Finish::Cancelled;
    }
    match answer {
        Ok(CallToolResponse::Complete(result)) => match serde_json::to_value(result) {
            Ok(serde_json::Value::Object(result)) => Finish::Completed(result),
            _ => Finish::Failed(error_object(INTERNAL_ERROR, "the tool's result could not be kept")),
        },
        Ok(_) => Finish::Failed(error_object(
            INTERNAL_ERROR,
            "the call asked for input in a way a task cannot carry",
        )),
        Err(error) => Finish::Failed(match serde_json::to_value(&error) {
            Ok(serde_json::Value::Object(error)) => error,
            _ => error_object(INTERNAL_ERROR, error.message.to_string()),
        }),
    }
}

/// The plugin's progress and log lines (info and above) become the task's
/// `statusMessage`.
async fn status_messages(driver: Arc<TaskDriver>, mut events: mpsc::Receiver<GuestEvent>) {
    while let Some(event) = events.recv().await {
        let text = match event {
            GuestEvent::Progress {
                progress,
                total,
                message,
            } => match (message, total) {
                (Some(message), _) => message,
                (None, Some(total)) => format!("{progress} of {total}"),
                (None, None) => format!("{progress}"),
            },
            GuestEvent::Log { level, message } if Level::from(level) >= Level::Info => message,
            GuestEvent::Log { .. } => continue,
        };
        driver.status_message(text);
    }
}
