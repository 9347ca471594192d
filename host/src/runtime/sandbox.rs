//! The per-call sandbox: everything one call's `Store` owns.
//!
//! A `Sandbox` is built fresh for every call and dropped with its store, so no
//! state survives from one call to the next. What it can reach is exactly
//! what is configured here — in this version: no files, no sockets, no
//! environment, no arguments, closed stdin, captured stdout/stderr.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{LogLevel, warden::plugin as contract};
use super::output::CapturedOutput;
use crate::manifest::Limits;

/// Something the guest reported during a call, for the client.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestEvent {
    Log {
        level: LogLevel,
        message: String,
    },
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// How many events may wait for the client before further ones are dropped:
/// a plugin that floods progress must not grow the host's memory.
pub const EVENT_BACKLOG: usize = 64;

/// The longest log message or progress message kept from a guest.
const MAX_MESSAGE_BYTES: usize = 4096;

/// What the host knows about the call in progress.
#[derive(Clone)]
pub struct CallContext {
    pub plugin: Arc<str>,
    pub events: Option<mpsc::Sender<GuestEvent>>,
    pub cancel: CancellationToken,
}

impl CallContext {
    /// A context with no client attached (loading, `warden check`).
    pub fn detached(plugin: Arc<str>) -> Self {
        Self {
            plugin,
            events: None,
            cancel: CancellationToken::new(),
        }
    }
}

/// Enforces the memory limit and remembers that it was hit, so a failed
/// call can name the limit instead of reporting a bare trap.
pub struct MemoryLimiter {
    limit: usize,
    used: usize,
    pub exceeded: bool,
}

/// Table slots are counted against the memory budget at this size.
const TABLE_ELEMENT_BYTES: usize = 16;

impl MemoryLimiter {
    fn new(limit: u64) -> Self {
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            used: 0,
            exceeded: false,
        }
    }

    fn grow(&mut self, current: usize, desired: usize) -> bool {
        let next = self.used.saturating_sub(current).saturating_add(desired);
        if next > self.limit {
            self.exceeded = true;
            return false;
        }
        self.used = next;
        true
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        Ok(self.grow(current, desired))
    }

    fn table_growing(&mut self, current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        Ok(self.grow(
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
        ))
    }
}

pub struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    pub limiter: MemoryLimiter,
    pub call: CallContext,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
}

impl Sandbox {
    pub fn new(limits: &Limits, call: CallContext) -> Self {
        let cap = usize::try_from(limits.log_output).unwrap_or(usize::MAX);
        let stdout = CapturedOutput::new(cap);
        let stderr = CapturedOutput::new(cap);
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(limits.memory),
            call,
            stdout,
            stderr,
        }
    }

    fn send(&self, event: GuestEvent) {
        if let Some(events) = &self.call.events {
            // A full backlog drops the event: the guest must never block on,
            // or grow, the host's queue to the client.
            let _ = events.try_send(event);
        }
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

fn clip(mut text: String) -> String {
    if text.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

impl contract::types::Host for Sandbox {}

impl contract::host::Host for Sandbox {
    fn log(&mut self, level: LogLevel, message: String) {
        let message = clip(message);
        let plugin = &*self.call.plugin;
        match level {
            LogLevel::Debug => tracing::debug!(target: "plugin", plugin, "{message}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(target: "plugin", plugin, "{message}"),
            LogLevel::Warning => tracing::warn!(target: "plugin", plugin, "{message}"),
            _ => tracing::error!(target: "plugin", plugin, "{message}"),
        }
        self.send(GuestEvent::Log { level, message });
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.send(GuestEvent::Progress {
            progress,
            total,
            message: message.map(clip),
        });
    }

    fn cancelled(&mut self) -> bool {
        self.call.cancel.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_counts_all_memories_and_tables_against_one_budget() {
        let mut limiter = MemoryLimiter::new(1000);
        assert!(limiter.grow(0, 600));
        assert!(!limiter.grow(0, 500), "a second memory shares the budget");
        assert!(limiter.exceeded);
        assert!(limiter.grow(600, 900), "growing the first memory in place");
        assert!(!limiter.grow(900, 1001));
    }

    #[test]
    fn long_messages_are_clipped_on_a_char_boundary() {
        let clipped = clip("é".repeat(MAX_MESSAGE_BYTES));
        assert!(clipped.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
        assert!(clipped.ends_with('…'));
    }
}
