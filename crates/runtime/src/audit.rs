//! The audit trail: one JSON line per plugin invocation — `tools/call`,
//! `resources/read`, `prompts/get`, `completion/complete` — appended to a file.
//!
//! Arguments are never logged, only their size: they may hold secrets. The
//! file they are written to is `audit_log`'s.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Ok,
    ToolError,
    Trap,
    Timeout,
    MemoryLimit,
    FuelLimit,
    OutputLimit,
    HandleLimit,
    Busy,
    Cancelled,
    Unavailable,
    /// Warden's own code panicked during the call (caught; the server goes on).
    HostPanic,
    Rejected,
    /// The plugin asked for input first; the client answers and calls again
    /// (2026-07-28 wire).
    InputRequired,
    /// The caller's access grant does not reach it (OAuth mode): refused
    /// before any plugin ran.
    Forbidden,
}

/// What a plugin was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InvocationKind {
    ToolCall,
    ResourceRead,
    PromptGet,
    Completion,
}

impl Outcome {
    /// As the audit log writes it (and `/metrics` labels it).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool-error",
            Outcome::Trap => "trap",
            Outcome::Timeout => "timeout",
            Outcome::MemoryLimit => "memory-limit",
            Outcome::FuelLimit => "fuel-limit",
            Outcome::OutputLimit => "output-limit",
            Outcome::HandleLimit => "handle-limit",
            Outcome::Busy => "busy",
            Outcome::Cancelled => "cancelled",
            Outcome::Unavailable => "unavailable",
            Outcome::HostPanic => "host-panic",
            Outcome::Rejected => "rejected",
            Outcome::InputRequired => "input-required",
            Outcome::Forbidden => "forbidden",
        }
    }
}

impl InvocationKind {
    /// As the audit log writes it (and `/metrics` labels it).
    pub fn as_str(self) -> &'static str {
        match self {
            InvocationKind::ToolCall => "tool-call",
            InvocationKind::ResourceRead => "resource-read",
            InvocationKind::PromptGet => "prompt-get",
            InvocationKind::Completion => "completion",
        }
    }
}

#[derive(Serialize)]
pub struct Record<'a> {
    /// Seconds since the Unix epoch, with millisecond precision.
    pub time: f64,
    pub plugin: &'a str,
    /// Who asked (OAuth mode): the access token's subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<&'a str>,
    /// The W3C `traceparent` the request carried (`_meta` or header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<&'a str>,
    pub kind: InvocationKind,
    /// The tool or prompt name, the resource URI, or for a completion the
    /// prompt name or URI template.
    pub target: &'a str,
    /// For tool calls (also in `target`), as older readers of the log expect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_name: Option<&'a str>,
    pub duration_ms: f64,
    pub outcome: Outcome,
    pub argument_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
    /// Accesses the sandbox refused during the call.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub denied: &'a [String],
    /// Where the time went, for calls that reached the plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// For a component pulled from a registry: where from, and who signed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<Source<'a>>,
}

/// With `--audit-required`: written before an invocation runs, so that none
/// runs unaudited. Its end is the invocation's `Record`, as without it.
#[derive(Serialize)]
pub struct Start<'a> {
    pub time: f64,
    pub plugin: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<&'a str>,
    pub kind: InvocationKind,
    pub target: &'a str,
    /// `started`.
    pub phase: &'a str,
}

/// One event of an MCP task: created, a status change, a cancel request,
/// its record expiring. The task's id is a bearer secret: only a digest of
/// it is written, enough to follow one task through the log.
#[derive(Serialize)]
pub struct TaskEvent<'a> {
    pub time: f64,
    /// A digest of the task id.
    pub task: &'a str,
    pub plugin: &'a str,
    pub tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<&'a str>,
    /// `created`, `working`, `input_required`, `completed`, `failed`,
    /// `cancelled`, `cancel_requested` or `expired`.
    pub task_event: &'a str,
    pub replica: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<&'a str>,
}

/// A pulled component's origin, as its load verified it.
#[derive(Serialize)]
pub struct Source<'a> {
    pub reference: &'a str,
    pub digest: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<&'a str>,
}

/// Where one call's time went inside Warden, in microseconds: checking the
/// arguments, building the store and sandbox, instantiating the component
/// (or when that was done ahead, how long it took then), the guest's own work, and turning its answer into the MCP result.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Timing {
    pub validate_us: u64,
    pub setup_us: u64,
    pub instantiate_us: u64,
    /// The sandbox was instantiated before the call arrived (`spare.rs`),
    /// off the call's path: this long.
    #[serde(skip_serializing_if = "is_zero")]
    pub instantiated_ahead_us: u64,
    pub guest_us: u64,
    pub convert_us: u64,
    /// For a plugin with a `[limits] fuel` budget: the fuel the call used,
    /// to size that budget by (the same for the same work, unlike time; an
    /// instantiation on the call's path adds its start code's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fuel_used: Option<u64>,
}

fn is_zero(micros: &u64) -> bool {
    *micros == 0
}

pub fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

pub fn now() -> f64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    (since.as_millis() as f64) / 1000.0
}

pub fn millis(duration: Duration) -> f64 {
    (duration.as_micros() as f64 / 1000.0 * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod names {
    use super::*;

    #[test]
    fn as_str_is_what_the_log_writes() {
        use Outcome::*;
        for outcome in [
            Ok,
            ToolError,
            Trap,
            Timeout,
            MemoryLimit,
            FuelLimit,
            OutputLimit,
            HandleLimit,
            Busy,
            Cancelled,
            Unavailable,
            Rejected,
            InputRequired,
        ] {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.as_str());
        }
        for kind in [
            InvocationKind::ToolCall,
            InvocationKind::ResourceRead,
            InvocationKind::PromptGet,
            InvocationKind::Completion,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }
}
