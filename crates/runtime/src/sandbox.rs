//! The per-call sandbox: everything one call's `Store` owns.
//!
//! A `Sandbox` is built fresh for every call and dropped with its store, so no
//! state survives from one call to the next. What it can reach is exactly
//! what is configured here — in this version: no files, no sockets, no
//! environment, no arguments, closed stdin, captured stdout/stderr.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::config_store::ConfigValues;
use super::contract::{self, Interaction, LogLevel};
use super::denials::Denials;
use super::egress::Egress;
use super::event_budget::EventBudget;
use super::mounts::PinnedMounts;
use super::output::CapturedOutput;
use crate::grants::{Asks, Grants, SocketUse};
use crate::manifest::Limits;
use crate::printable::one_line;
use crate::secrets::Redactor;
use crate::task_policy::TaskPolicy;

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

/// The most random bytes one call to `wasi:random` may ask for.
const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// The longest log message or progress message kept from a guest.
const MAX_MESSAGE_BYTES: usize = 4096;

/// The most bytes one `wasi:http` header collection may hold. Each is a
/// resource, so a call holds at most `[limits] handles` of them: this bounds
/// the host memory a call can fill with headers (wasmtime's default, 128 KiB,
/// would allow 32 MiB at the default 256 handles).
pub const MAX_HEADER_BYTES: usize = 64 << 10;

/// What the host knows about the call in progress.
#[derive(Clone)]
pub struct CallContext {
    pub plugin: Arc<str>,
    pub events: Option<mpsc::Sender<GuestEvent>>,
    pub cancel: CancellationToken,
    /// What this call may ask of the client (`host.can-ask`).
    pub asks: Asks,
    /// The time limit in place of `[limits] timeout`: a task's (`[tasks] timeout`).
    pub timeout: Option<Duration>,
    /// After it succeeds, instantiate the plugin's next sandbox ahead of its
    /// next call (`spare.rs`): for clients' calls, not for loading a plugin
    /// or a one-off `warden call`.
    pub prepare_next: bool,
}

impl CallContext {
    /// A context with no client attached (loading, `warden check`, `warden call`).
    pub fn detached(plugin: Arc<str>) -> Self {
        Self {
            plugin,
            events: None,
            cancel: CancellationToken::new(),
            asks: Asks::default(),
            timeout: None,
            prepare_next: false,
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

    /// Linear memory and tables in use (they never shrink, so also the peak).
    pub fn used(&self) -> usize {
        self.used
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

/// What a plugin was granted, shared by all its calls.
pub struct SandboxSettings {
    pub limits: Limits,
    pub grants: Arc<Grants>,
    /// `grants.mounts`, opened once at load (see `mounts.rs`).
    pub mounts: PinnedMounts,
    /// The manifest's file name, for messages that say what to change.
    pub manifest: Arc<str>,
    /// `grants.config`, in the form `wasi:config/store` reads.
    pub config: ConfigValues,
    /// `[tasks]`: which tools' calls become MCP tasks.
    pub tasks: TaskPolicy,
    /// The plugin's secrets (`grants.redactor()`), for everything it says
    /// that Warden logs or records.
    pub redactor: Arc<Redactor>,
}

pub struct Sandbox {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    egress: Egress,
    table: ResourceTable,
    pub limiter: MemoryLimiter,
    pub call: CallContext,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub denials: Denials,
    events: EventBudget,
    /// What `wasi:config/store` answers: the manifest's `[config]`.
    pub config: ConfigValues,
    /// Applied to what the guest says besides its answer, as it arrives.
    pub redactor: Arc<Redactor>,
}

impl Sandbox {
    /// Builds the sandbox for one call from the plugin's policy: the
    /// granted mounts, variables and sockets, and nothing else (no
    /// arguments, closed stdin, captured stdout/stderr).
    pub fn new(policy: &SandboxSettings, call: CallContext) -> Result<Self> {
        let cap = usize::try_from(policy.limits.log_output).unwrap_or(usize::MAX);
        let stdout = CapturedOutput::new(cap);
        let stderr = CapturedOutput::new(cap);
        let denials = Denials::new(policy.redactor.clone());
        let grants = &policy.grants;
        let mut wasi = WasiCtx::builder();
        wasi.stdout(stdout.clone())
            .stderr(stderr.clone())
            // Bounds what one `get-random-bytes` call makes the host allocate.
            .max_random_size(MAX_RANDOM_BYTES);
        for (name, setting) in &grants.env {
            wasi.env(name, setting.value());
        }
        // From the handles opened at load, never by path: a folder renamed
        // or swapped for a symlink since then cannot redirect a mount.
        policy.mounts.preopen(&mut wasi)?;
        // A plugin without a socket grant cannot even create a socket (no OS
        // handle is opened); one with a grant reaches the check below, which
        // allows only the granted addresses, so refusals are logged and audited.
        let sockets = grants.clone();
        let (plugin, manifest, recorded) = (call.plugin.clone(), policy.manifest.clone(), denials.clone());
        wasi.allow_tcp(!grants.sockets.tcp.is_empty())
            .allow_udp(!grants.sockets.udp.is_empty())
            .allow_ip_name_lookup(grants.sockets.dns)
            .socket_addr_check(move |addr, use_| {
                let use_ = match use_ {
                    SocketAddrUse::TcpBind => SocketUse::TcpBind,
                    SocketAddrUse::TcpConnect => SocketUse::TcpConnect,
                    SocketAddrUse::UdpBind => SocketUse::UdpBind,
                    SocketAddrUse::UdpSend => SocketUse::UdpSend,
                    SocketAddrUse::UdpReceive => SocketUse::UdpReceive,
                    SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => SocketUse::Listen,
                };
                let allowed = sockets.sockets.allows(addr, use_);
                // A dropped incoming datagram is not an attempt worth a line.
                if !allowed && use_ != SocketUse::UdpReceive {
                    let key = if matches!(use_, SocketUse::UdpSend | SocketUse::UdpBind) { "udp" } else { "tcp" };
                    recorded.record(
                        &plugin,
                        crate::metrics::DenialKind::Socket,
                        format!(
                            "socket access to {addr} ({use_:?}) is not granted; add \"{addr}\" to [network] {key} in {manifest}"
                        ),
                    );
                }
                Box::pin(std::future::ready(allowed))
            });
        let egress = Egress {
            plugin: call.plugin.clone(),
            manifest: policy.manifest.clone(),
            grants: grants.clone(),
            denials: denials.clone(),
        };
        let mut http = WasiHttpCtx::new();
        http.set_field_size_limit(MAX_HEADER_BYTES);
        // Every WASI resource the call holds is an entry here: capping the
        // table caps the OS handles and host memory the call can pin.
        let mut table = ResourceTable::new();
        table.set_max_capacity(policy.limits.handles as usize);
        Ok(Self {
            wasi: wasi.build(),
            http,
            egress,
            table,
            limiter: MemoryLimiter::new(policy.limits.memory),
            call,
            stdout,
            stderr,
            denials,
            events: EventBudget::new(policy.limits.log_output),
            config: policy.config.clone(),
            redactor: policy.redactor.clone(),
        })
    }

    /// Whether the guest holds no WASI resource (no file, socket, stream…).
    pub fn holds_no_resources(&self) -> bool {
        self.table.is_empty()
    }

    fn send(&self, event: GuestEvent) {
        if let Some(events) = &self.call.events {
            // A full backlog drops the event: the guest must never block on,
            // or grow, the host's queue to the client.
            let _ = events.try_send(event);
        }
    }

    /// Logs what the call printed and how much of its output and events
    /// were dropped, once, when the call is over.
    pub fn finish(&self, plugin: &str) {
        for (name, stream) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            let (text, dropped) = stream.take();
            if text.is_empty() && dropped == 0 {
                continue;
            }
            // Redacted before escaping, which would change a secret with a
            // line break in it; a text cut at the cap may end mid-secret.
            let text = if dropped > 0 {
                self.redactor.redact_cut(&text)
            } else {
                self.redactor.redact(&text)
            };
            let text = one_line(text.trim());
            if dropped > 0 {
                tracing::info!(target: "plugin", plugin, stream = name, dropped_bytes = dropped, "{text}");
            } else {
                tracing::info!(target: "plugin", plugin, stream = name, "{text}");
            }
        }
        if let Some((events, bytes)) = self.events.dropped() {
            tracing::warn!(
                target: "plugin",
                plugin,
                "dropped {events} log and progress messages ({bytes} bytes) past the call's budget \
                 (`[limits] log-output`, at most {} messages)",
                super::event_budget::MAX_EVENTS
            );
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

impl WasiHttpView for Sandbox {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            hooks: &mut self.egress,
            table: &mut self.table,
            ctx: &mut self.http,
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

/// The `host` interface, as the latest contract version has it; each
/// version's bindings adapt to it (see `contract::Host`).
impl contract::Host for Sandbox {
    fn log(&mut self, level: LogLevel, message: String) {
        // Redacted before it is clipped, so no clip leaves half a secret;
        // the client's `notifications/message` gets the redacted text too.
        let message = clip(self.redactor.redact_owned(message));
        if !self.events.admit(message.len()) {
            return;
        }
        let plugin = &*self.call.plugin;
        let line = one_line(&message);
        match level {
            LogLevel::Debug => tracing::debug!(target: "plugin", plugin, "{line}"),
            LogLevel::Info | LogLevel::Notice => tracing::info!(target: "plugin", plugin, "{line}"),
            LogLevel::Warning => tracing::warn!(target: "plugin", plugin, "{line}"),
            _ => tracing::error!(target: "plugin", plugin, "{line}"),
        }
        self.send(GuestEvent::Log { level, message });
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        // Redacted as `log` is: it reaches the client and a task's `statusMessage`.
        let message = message.map(|message| clip(self.redactor.redact_owned(message)));
        if !self.events.admit(message.as_ref().map_or(0, String::len)) {
            return;
        }
        self.send(GuestEvent::Progress {
            progress,
            total,
            message,
        });
    }

    fn cancelled(&mut self) -> bool {
        self.call.cancel.is_cancelled()
    }

    fn can_ask(&mut self, what: Interaction) -> bool {
        self.call.asks.allows(what)
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
