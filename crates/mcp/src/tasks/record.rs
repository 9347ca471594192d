//! One task as the store keeps it, and as `tasks/get` shows it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{DetailedTask, InputRequests, JsonObject, Task, TaskPayload, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A task record. Only the replica running the task writes it; others add
/// answers and cancel requests beside it (see `store`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: String,
    /// Who created it (`caller_identity`): only they may see or steer it.
    pub caller: String,
    pub plugin: String,
    pub tool: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    pub created_ms: u64,
    pub updated_ms: u64,
    pub ttl_ms: u64,
    pub poll_ms: u64,
    /// While `input_required`: what the client is asked, by wire key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// When `completed`: the `CallToolResult`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// When `failed`: the JSON-RPC error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonObject>,
    /// The replica running it, and until when its lease holds: a task whose
    /// lease ran out while it was not finished is `failed`, never `working`
    /// forever.
    pub replica: String,
    pub lease_until_ms: u64,
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn iso(ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// A JSON-RPC error object, as a `failed` task inlines it.
pub fn error_object(code: i32, message: impl Into<String>) -> JsonObject {
    let mut error = JsonObject::new();
    error.insert("code".into(), json!(code));
    error.insert("message".into(), json!(message.into()));
    error
}

/// JSON-RPC's internal error: what a task that could not finish fails with.
pub const INTERNAL_ERROR: i32 = -32603;

impl TaskRecord {
    /// The status as the audit log and `/metrics` name it.
    pub fn status_name(&self) -> &'static str {
        match self.status {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
            _ => "unknown",
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }

    /// When the store may forget it.
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// The record as of `now`: a task whose replica stopped renewing its
    /// lease has failed; questions already answered (`answered`, by wire
    /// key) are no longer asked.
    pub fn seen_at(mut self, now: u64, answered: &[String]) -> Self {
        if !self.is_terminal() && self.lease_until_ms < now {
            self.status = TaskStatus::Failed;
            self.status_message = None;
            self.input_requests = None;
            self.error = Some(error_object(
                INTERNAL_ERROR,
                format!(
                    "the Warden replica running this task (`{}`) stopped before it finished: its lease ran out at {}",
                    self.replica,
                    iso(self.lease_until_ms)
                ),
            ));
            self.updated_ms = self.lease_until_ms;
        }
        if let Some(requests) = self.input_requests.as_mut() {
            requests.retain(|key, _| !answered.contains(key));
            if requests.is_empty() && self.status == TaskStatus::InputRequired {
                self.status = TaskStatus::Working;
                self.input_requests = None;
            }
        }
        self
    }

    /// The base fields, as `CreateTaskResult` carries them.
    pub fn task(&self) -> Task {
        let mut task = Task::new(self.id.clone(), self.status, iso(self.created_ms), iso(self.updated_ms))
            .with_ttl_ms(self.ttl_ms)
            .with_poll_interval_ms(self.poll_ms);
        task.status_message = self.status_message.clone();
        task
    }

    /// As `tasks/get` shows it.
    pub fn detailed(&self) -> DetailedTask {
        let payload = match self.status {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: self.input_requests.clone().unwrap_or_default(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self
                    .error
                    .clone()
                    .unwrap_or_else(|| error_object(INTERNAL_ERROR, "the task failed")),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task(), payload)
    }

    /// Bytes the record holds, for the store's bound.
    pub fn size(&self) -> usize {
        serde_json::to_string(self).map_or(0, |text| text.len())
    }

    /// This record, ended `failed` for `why` (at most `MAX_ENDING_MESSAGE`
    /// characters): nothing it carried (result, questions, status line) is
    /// kept, so it is never more than `ENDING_ROOM` bytes larger than an
    /// unfinished record.
    pub fn ended_failed(mut self, why: &str, now: u64) -> Self {
        // Printable ASCII, so the bound in bytes holds once escaped as JSON.
        let why: String = why
            .chars()
            .map(|c| if c.is_ascii() && !c.is_ascii_control() { c } else { '?' })
            .take(MAX_ENDING_MESSAGE)
            .collect();
        self.status = TaskStatus::Failed;
        self.status_message = None;
        self.input_requests = None;
        self.result = None;
        self.error = Some(error_object(INTERNAL_ERROR, why));
        self.updated_ms = now;
        self
    }
}

/// The longest reason a store writes into a record it ends.
pub const MAX_ENDING_MESSAGE: usize = 400;

/// Bytes a store keeps free beside each unfinished record, so that the
/// record ending it `failed` (`ended_failed`) always fits: the reason, its
/// JSON and a longer `updatedMs` are within it.
pub const ENDING_ROOM: usize = 1024;

impl TaskRecord {
    /// Bytes the store counts for it: the record, and the room its ending
    /// needs while it is unfinished.
    pub fn charge(&self) -> usize {
        self.size() + if self.is_terminal() { 0 } else { ENDING_ROOM }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn working(lease_until_ms: u64) -> TaskRecord {
        TaskRecord {
            id: "t".into(),
            caller: String::new(),
            plugin: "p".into(),
            tool: "slow".into(),
            status: TaskStatus::Working,
            status_message: Some("half way".into()),
            created_ms: 1_000,
            updated_ms: 1_000,
            ttl_ms: 60_000,
            poll_ms: 500,
            input_requests: None,
            result: None,
            error: None,
            replica: "warden-0".into(),
            lease_until_ms,
        }
    }

    #[test]
    fn a_task_whose_lease_ran_out_has_failed() {
        let seen = working(5_000).seen_at(6_000, &[]);
        assert_eq!(seen.status, TaskStatus::Failed);
        let error = seen.error.unwrap();
        assert_eq!(error["code"], INTERNAL_ERROR);
        assert!(error["message"].as_str().unwrap().contains("warden-0"), "{error:?}");
        assert_eq!(working(5_000).seen_at(4_000, &[]).status, TaskStatus::Working);
    }

    #[test]
    fn the_wire_shape_is_flat_with_iso_times() {
        let value = serde_json::to_value(rmcp::model::CreateTaskResult::new(working(5_000).task())).unwrap();
        assert_eq!(value["resultType"], "task");
        assert_eq!(value["status"], "working");
        assert_eq!(value["createdAt"], "1970-01-01T00:00:01.000Z");
        assert_eq!(value["ttlMs"], 60_000);
        assert_eq!(value["pollIntervalMs"], 500);
        assert_eq!(value["statusMessage"], "half way");
    }
}
