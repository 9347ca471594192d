//! Why a call into a plugin did not return a value, how the audit log
//! records it, and how it is told to the client.

use std::time::Duration;

use crate::audit::Outcome;
use crate::manifest::format_size;

/// Why a call into a plugin did not return a value.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    Timeout(Duration),
    MemoryLimit(u64),
    FuelExhausted(u64),
    Trap {
        message: String,
        stderr_tail: Option<String>,
        /// The first access the sandbox refused during the call, if any: a
        /// guest that crashes after a refusal (a JavaScript `fetch` that
        /// aborts) would otherwise hide why.
        refused: Option<String>,
    },
    Cancelled,
    Busy {
        concurrency: u32,
    },
    /// The call's resource table was full: `[limits] handles`.
    HandleLimit(u32),
    /// The guest handed over more than the host will read in one crossing
    /// (the hostcall fuel, derived from `[limits] output`, which is given).
    TooMuchData {
        output: u64,
    },
    /// The sandbox could not be built (e.g. a granted directory vanished).
    Unavailable(String),
    /// Warden's own code panicked during the call: a bug in Warden, caught
    /// so that only this call ends.
    HostPanic(String),
}

/// A panic caught on a call's path, as the error that ends the call.
#[derive(Debug)]
pub struct HostPanicked(String);

impl HostPanicked {
    pub fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        Self(message)
    }
}

impl std::fmt::Display for HostPanicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Warden itself failed (a bug in Warden, not in the plugin): {}",
            self.0
        )
    }
}

impl std::error::Error for HostPanicked {}

impl CallFailure {
    /// How the audit log records this outcome.
    pub fn outcome(&self) -> Outcome {
        match self {
            CallFailure::Timeout(_) => Outcome::Timeout,
            CallFailure::MemoryLimit(_) => Outcome::MemoryLimit,
            CallFailure::FuelExhausted(_) => Outcome::FuelLimit,
            CallFailure::Trap { .. } => Outcome::Trap,
            CallFailure::Cancelled => Outcome::Cancelled,
            CallFailure::Busy { .. } => Outcome::Busy,
            CallFailure::HandleLimit(_) => Outcome::HandleLimit,
            CallFailure::TooMuchData { .. } => Outcome::OutputLimit,
            CallFailure::Unavailable(_) => Outcome::Unavailable,
            CallFailure::HostPanic(_) => Outcome::HostPanic,
        }
    }

    /// A message for the client that names the plugin, what happened and,
    /// for a limit, the manifest key that raises it.
    /// `manifest` is the manifest's file name, where a limit would be raised.
    pub fn describe(&self, plugin: &str, manifest: &str, what: &str) -> String {
        match self {
            CallFailure::Timeout(limit) => format!(
                "plugin `{plugin}` exceeded its {} time limit while running {what}; \
                 the operator can raise `[limits] timeout` in {manifest}",
                humantime::format_duration(*limit)
            ),
            CallFailure::MemoryLimit(limit) => format!(
                "plugin `{plugin}` exceeded its {} memory limit while running {what}; \
                 the operator can raise `[limits] memory` in {manifest}",
                format_size(*limit)
            ),
            CallFailure::FuelExhausted(fuel) => format!(
                "plugin `{plugin}` used up its fuel ({fuel} units) while running {what}; \
                 the operator can raise `[limits] fuel` in {manifest}"
            ),
            CallFailure::Trap {
                message,
                stderr_tail,
                refused,
            } => {
                let mut text = format!("plugin `{plugin}` crashed while running {what}: {message}");
                if let Some(refused) = refused {
                    text.push_str(&format!(", after the sandbox refused it: {refused}"));
                }
                if let Some(tail) = stderr_tail {
                    text.push_str(&format!(" — it printed: {tail}"));
                }
                text
            }
            CallFailure::HandleLimit(limit) => format!(
                "plugin `{plugin}` tried to hold more than {limit} handles (files, sockets, streams, HTTP \
                 requests) at once while running {what}; the operator can raise `[limits] handles` in {manifest}"
            ),
            CallFailure::TooMuchData { output } => format!(
                "plugin `{plugin}` handed Warden more data than it reads in one go ({}) while running {what}, \
                 far beyond its output limit of {}; the operator can raise `[limits] output` in {manifest}",
                format_size(hostcall_fuel(*output) as u64),
                format_size(*output)
            ),
            CallFailure::Cancelled => format!("the call to {what} of plugin `{plugin}` was cancelled"),
            CallFailure::Unavailable(why) => format!("plugin `{plugin}` cannot run {what}: {why}"),
            CallFailure::HostPanic(why) => format!(
                "the call to {what} of plugin `{plugin}` ended: {why}; the server goes on serving (please report it)"
            ),
            CallFailure::Busy { concurrency } => format!(
                "plugin `{plugin}` is busy: {concurrency} calls are already running and none finished in time; \
                 try again, or the operator can raise `[limits] concurrency` in {manifest}"
            ),
        }
    }
}

/// The host memory one guest-to-host crossing may take, in bytes as
/// wasmtime counts them (each lifted value costs its in-memory size, so a
/// `list<u8>` of n bytes costs about 32 n): 64 times the output limit,
/// between 16 MiB and 256 MiB.
pub fn hostcall_fuel(output_limit: u64) -> usize {
    usize::try_from(output_limit.saturating_mul(64).clamp(16 << 20, 256 << 20)).unwrap_or(256 << 20)
}
