//! The results of one run, as Markdown tables and as JSON, with the
//! Warden/native ratios computed pair by pair and checked against the targets.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use serde_json::{Value, json};

use crate::figures::{HttpFigures, StdioFigures};
use crate::large::TrivialCall;
use crate::stats::{Summary, human};
use crate::{devloop, soak};

/// stdio p50 of `echo`: Warden within this factor of native.
const STDIO_ECHO_TARGET: f64 = 1.5;
/// stdio p50 of `hash`: Warden within this factor of native.
const STDIO_HASH_TARGET: f64 = 1.2;
/// HTTP throughput at every concurrency: Warden at least this share of
/// native, for `echo` and for `hash` (whose guest work is wasm against
/// native code).
const HTTP_ECHO_TARGET: f64 = 1.0;
const HTTP_HASH_TARGET: f64 = 0.9;
/// Start with 100 plugins (copies of one component): cold, and warm, under these.
const COLD_100_TARGET: Duration = Duration::from_secs(1);
const WARM_100_TARGET: Duration = Duration::from_millis(100);
/// A large (Python or JavaScript) component's tools listed, cold cache, within this.
const LARGE_COLD_TARGET: Duration = Duration::from_secs(2);
/// A trivial call in a fresh instance of a Python or JavaScript component:
/// setup + instantiation + the guest's work, p50, at most this.
const TRIVIAL_CALL_TARGET: Duration = Duration::from_micros(300);
/// Resident memory idle with 20 plugins loaded from a warm cache: at most this.
const IDLE_20_TARGET: u64 = 15 << 20;
/// Soak: resident memory at the end at most this share above after warm-up.
const SOAK_RSS_GROWTH: f64 = 0.10;
/// Soak: open file descriptors at the end at most this many above after warm-up.
const SOAK_FD_GROWTH: usize = 4;

#[derive(Default)]
pub struct Report {
    quick: bool,
    elapsed: Duration,
    /// (tool, side) → latency and CPU
    stdio: BTreeMap<(String, String), StdioFigures>,
    /// (tool, concurrency, side) → (latency, calls per second)
    http: BTreeMap<(String, usize, String), HttpFigures>,
    /// (what, side) → bytes
    memory: Vec<(String, String, u64)>,
    /// plugins → Warden's resident bytes, idle after a warm start
    idle: BTreeMap<usize, u64>,
    /// plugins → (cold, warm)
    startup: BTreeMap<usize, (Summary, Summary)>,
    native_startup: Option<Summary>,
    /// Large components: (label, cold, warm) to the first `tools/list`.
    large_startup: Vec<(String, Summary, Summary)>,
    /// tool → parts
    breakdown: BTreeMap<String, Value>,
    /// A trivial call of each large component.
    trivial_calls: Vec<TrivialCall>,
    soak: Option<soak::Outcome>,
    devloop: Vec<devloop::Row>,
    /// How many of the functions `host/link-order.txt` lists this Warden
    /// binary has, of how many: fewer means the list is stale.
    layout: Option<(usize, usize)>,
}

fn ratio(warden: Duration, native: Duration) -> f64 {
    warden.as_secs_f64() / native.as_secs_f64()
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn mib_whole(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

impl Report {
    pub fn new(quick: bool) -> Self {
        Self {
            quick,
            ..Self::default()
        }
    }

    pub fn stdio(&mut self, tool: &str, side: &str, figures: StdioFigures) {
        self.stdio.insert((tool.into(), side.into()), figures);
    }

    pub fn http(&mut self, tool: &str, concurrency: usize, side: &str, figures: HttpFigures) {
        self.http.insert((tool.into(), concurrency, side.into()), figures);
    }

    pub fn memory(&mut self, what: &str, side: &str, bytes: u64) {
        self.memory.push((what.into(), side.into(), bytes));
    }

    pub fn layout(&mut self, found: usize, listed: usize) {
        self.layout = Some((found, listed));
    }

    pub fn idle(&mut self, plugins: usize, bytes: u64) {
        self.idle.insert(plugins, bytes);
    }

    /// Each warm idle figure beyond the smallest, with its growth per
    /// plugin over it: (plugins, bytes, bytes per plugin).
    fn growth(&self) -> Vec<(usize, u64, Option<f64>)> {
        let first = self.idle.iter().next().map(|(n, b)| (*n, *b));
        self.idle
            .iter()
            .map(|(&plugins, &bytes)| {
                let per_plugin = first
                    .filter(|(n, _)| plugins > *n)
                    .map(|(n, b)| (bytes as f64 - b as f64) / (plugins - n) as f64);
                (plugins, bytes, per_plugin)
            })
            .collect()
    }

    pub fn startup(&mut self, plugins: usize, cold: Summary, warm: Summary) {
        self.startup.insert(plugins, (cold, warm));
    }

    pub fn native_startup(&mut self, summary: Summary) {
        self.native_startup = Some(summary);
    }

    pub fn large_startup(&mut self, label: &str, cold: Summary, warm: Summary) {
        self.large_startup.push((label.into(), cold, warm));
    }

    pub fn breakdown(&mut self, tool: &str, parts: Value) {
        self.breakdown.insert(tool.into(), parts);
    }

    pub fn trivial_call(&mut self, call: TrivialCall) {
        self.trivial_calls.push(call);
    }

    pub fn soak(&mut self, outcome: soak::Outcome) {
        self.soak = Some(outcome);
    }

    pub fn devloop(&mut self, rows: Vec<devloop::Row>) {
        self.devloop = rows;
    }

    pub fn finish(&mut self, elapsed: Duration) {
        self.elapsed = elapsed;
    }

    /// Warden's p50 over the faster native server's: the stricter baseline.
    fn stdio_ratio(&self, tool: &str) -> Option<f64> {
        let native = ["native", "native-pipes"]
            .iter()
            .filter_map(|side| self.stdio.get(&(tool.into(), (*side).into())))
            .map(|s| s.latency.p50)
            .min()?;
        let warden = self.stdio.get(&(tool.into(), "warden".into()))?;
        Some(ratio(warden.latency.p50, native))
    }

    fn http_ratio(&self, tool: &str, concurrency: usize) -> Option<f64> {
        let native = self.http.get(&(tool.into(), concurrency, "native".into()))?;
        let warden = self.http.get(&(tool.into(), concurrency, "warden".into()))?;
        Some(warden.throughput / native.throughput)
    }

    /// Each target: what it is, the measured figure, and whether it is met.
    fn targets(&self) -> Vec<(String, String, bool)> {
        let mut targets = Vec::new();
        if let Some(r) = self.stdio_ratio("echo") {
            targets.push((
                format!("stdio `echo` p50 ≤ {STDIO_ECHO_TARGET}× the faster native"),
                format!("{r:.2}×"),
                r <= STDIO_ECHO_TARGET,
            ));
        }
        if let Some(r) = self.stdio_ratio("hash") {
            targets.push((
                format!("stdio `hash` p50 ≤ {STDIO_HASH_TARGET}× the faster native"),
                format!("{r:.2}×"),
                r <= STDIO_HASH_TARGET,
            ));
        }
        for (tool, target) in [("echo", HTTP_ECHO_TARGET), ("hash", HTTP_HASH_TARGET)] {
            for concurrency in [1, 8, 32] {
                if let Some(r) = self.http_ratio(tool, concurrency) {
                    targets.push((
                        format!("HTTP `{tool}` throughput at concurrency {concurrency} ≥ {target}× native"),
                        format!("{r:.2}×"),
                        r >= target,
                    ));
                }
            }
        }
        if let Some((cold, warm)) = self.startup.get(&100) {
            targets.push((
                "cold start with 100 copies of one plugin < 1 s".into(),
                human(cold.p50),
                cold.p50 < COLD_100_TARGET,
            ));
            targets.push((
                "warm start with 100 plugins < 100 ms".into(),
                human(warm.p50),
                warm.p50 < WARM_100_TARGET,
            ));
        }
        for (label, cold, _) in &self.large_startup {
            targets.push((
                format!("cold start, one large component: {label} ≤ 2 s"),
                human(cold.p50),
                cold.p50 <= LARGE_COLD_TARGET,
            ));
        }
        for call in &self.trivial_calls {
            targets.push((
                format!(
                    "a trivial call in a fresh instance, {} `{}`, {} (setup + instantiate + guest, p50) ≤ {}",
                    call.label,
                    call.tool,
                    call.pace(),
                    human(TRIVIAL_CALL_TARGET)
                ),
                human(call.sandbox.p50),
                call.sandbox.p50 <= TRIVIAL_CALL_TARGET,
            ));
        }
        if let Some(&idle) = self.idle.get(&20) {
            targets.push((
                format!("RSS idle, 20 plugins, warm cache ≤ {}", mib_whole(IDLE_20_TARGET)),
                mib(idle),
                idle <= IDLE_20_TARGET,
            ));
        }
        if let Some(soak) = &self.soak {
            targets.push((
                format!("soak: no failed call of {}", soak.plan.calls),
                format!("{} failed", soak.failed),
                soak.failed == 0,
            ));
            targets.push((
                format!("soak: all {} reloads applied", soak.plan.reloads),
                format!("{} applied", soak.reloads_applied),
                soak.reloads_applied >= soak.plan.reloads,
            ));
            let growth = soak.end.rss as f64 / soak.warm.rss as f64 - 1.0;
            targets.push((
                format!(
                    "soak: RSS at the end ≤ {:.0} % above after warm-up",
                    SOAK_RSS_GROWTH * 100.0
                ),
                format!("{:+.1} %", growth * 100.0),
                growth <= SOAK_RSS_GROWTH,
            ));
            targets.push((
                format!("soak: open fds at the end ≤ after warm-up + {SOAK_FD_GROWTH}"),
                format!("{} → {}", soak.warm.fds, soak.end.fds),
                soak.end.fds <= soak.warm.fds + SOAK_FD_GROWTH,
            ));
        }
        targets.extend(devloop::targets(&self.devloop));
        targets
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "## Warden against a native rmcp server{}\n",
            if self.quick { " (quick run: few samples)" } else { "" }
        );

        let _ = writeln!(
            out,
            "### stdio `tools/call` round trip, sequential (2025-11-25 session)\n"
        );
        let _ = writeln!(
            out,
            "The native server through rmcp's stdio transport, and through non-blocking pipes as Warden's own transport reads and writes them.\n"
        );
        let _ = writeln!(
            out,
            "| tool | native (rmcp stdio) p50 / p99 | native (pipes) p50 / p99 | Warden p50 / p99 | calls each | Warden/native | Warden/native (pipes) | server CPU per call, native / pipes / Warden |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
        for tool in ["echo", "hash"] {
            let get = |side: &str| self.stdio.get(&(tool.into(), side.into()));
            let (Some(native), Some(pipes), Some(warden)) = (get("native"), get("native-pipes"), get("warden")) else {
                continue;
            };
            let (n, p, w) = (&native.latency, &pipes.latency, &warden.latency);
            let _ = writeln!(
                out,
                "| `{tool}` | {} / {} | {} / {} | {} / {} | {} | {:.2}× | {:.2}× | {} / {} / {} |",
                human(n.p50),
                human(n.p99),
                human(p.p50),
                human(p.p99),
                human(w.p50),
                human(w.p99),
                w.count,
                ratio(w.p50, n.p50),
                ratio(w.p50, p.p50),
                human(native.server_cpu_per_call),
                human(pipes.server_cpu_per_call),
                human(warden.server_cpu_per_call)
            );
        }

        let _ = writeln!(
            out,
            "\n### HTTP `tools/call` (2026-07-28, one client per concurrent caller)\n"
        );
        let _ = writeln!(
            out,
            "| tool | concurrency | native calls/s | Warden calls/s | Warden/native | native p50 / p99 | Warden p50 / p99 | server CPU per call, native / Warden | Warden calls |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
        for tool in ["echo", "hash"] {
            for concurrency in [1, 8, 32] {
                let (Some(native), Some(warden)) = (
                    self.http.get(&(tool.into(), concurrency, "native".into())),
                    self.http.get(&(tool.into(), concurrency, "warden".into())),
                ) else {
                    continue;
                };
                let _ = writeln!(
                    out,
                    "| `{tool}` | {concurrency} | {:.0} | {:.0} | {:.2}× | {} / {} | {} / {} | {} / {} | {} |",
                    native.throughput,
                    warden.throughput,
                    warden.throughput / native.throughput,
                    human(native.latency.p50),
                    human(native.latency.p99),
                    human(warden.latency.p50),
                    human(warden.latency.p99),
                    human(native.server_cpu_per_call),
                    human(warden.server_cpu_per_call),
                    warden.latency.count
                );
            }
        }

        let _ = writeln!(out, "\n### Startup to the first `tools/list` answer (stdio)\n");
        let _ = writeln!(out, "| plugins | cold cache p50 | warm cache p50 | runs |");
        let _ = writeln!(out, "|---|---|---|---|");
        for (plugins, (cold, warm)) in &self.startup {
            let _ = writeln!(
                out,
                "| {plugins} | {} | {} | {} |",
                human(cold.p50),
                human(warm.p50),
                warm.count
            );
        }
        for (label, cold, warm) in &self.large_startup {
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} |",
                human(cold.p50),
                human(warm.p50),
                warm.count
            );
        }
        if let Some(native) = &self.native_startup {
            let _ = writeln!(out, "| native server | {} | | {} |", human(native.p50), native.count);
        }

        let _ = writeln!(out, "\n### Memory\n");
        let _ = writeln!(out, "| what | native | Warden |");
        let _ = writeln!(out, "|---|---|---|");
        let mut seen = Vec::new();
        for (what, _, _) in &self.memory {
            if seen.contains(what) {
                continue;
            }
            seen.push(what.clone());
            let find = |side: &str| {
                self.memory
                    .iter()
                    .find(|(w, s, _)| w == what && s == side)
                    .map_or("—".to_string(), |(_, _, bytes)| mib(*bytes))
            };
            let _ = writeln!(out, "| {what} | {} | {} |", find("native"), find("warden"));
        }
        if self.idle.len() > 1 {
            let _ = writeln!(
                out,
                "\n| plugins loaded (warm cache) | Warden RSS idle | growth per plugin over the first row |"
            );
            let _ = writeln!(out, "|---|---|---|");
            for (plugins, bytes, per_plugin) in self.growth() {
                let growth = per_plugin.map_or("—".to_string(), |b| format!("{:.1} KiB", b / 1024.0));
                let _ = writeln!(out, "| {plugins} | {} | {growth} |", mib(bytes));
            }
        }
        if let Some((found, listed)) = self.layout {
            let _ = writeln!(
                out,
                "\nCode layout: {found} of the {listed} functions `host/link-order.txt` lists are in this \
                 binary{}.",
                // Even a few missing cost megabytes: each function the list
                // no longer names runs from a code window of its own again.
                if found < listed {
                    " — the list is stale: record it again with `python3 host/link-order.py`"
                } else {
                    ""
                }
            );
        }

        let _ = writeln!(out, "\n### Inside a Warden call (p50, from its audit log)\n");
        let _ = writeln!(
            out,
            "| tool | validate args | store + sandbox | instantiate | guest | convert result | round trip at the client | the rest (transport, JSON) | calls served by a sandbox instantiated ahead (that instantiation) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
        for (tool, parts) in &self.breakdown {
            let p50 = |key: &str| parts[key]["p50_us"].as_f64().unwrap_or_default();
            let inside: f64 = ["validate", "setup", "instantiate", "guest", "convert"]
                .iter()
                .map(|k| p50(k))
                .sum();
            let _ = writeln!(
                out,
                "| `{tool}` | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | ≈ {:.0} µs | {} of {} ({:.0} µs) |",
                p50("validate"),
                p50("setup"),
                p50("instantiate"),
                p50("guest"),
                p50("convert"),
                p50("round_trip"),
                (p50("round_trip") - inside).max(0.0),
                parts["instantiated_ahead"]["count"],
                parts["round_trip"]["count"],
                p50("instantiated_ahead"),
            );
        }

        if !self.trivial_calls.is_empty() {
            out += &TrivialCall::table(&self.trivial_calls);
        }

        if let Some(soak) = &self.soak {
            let _ = writeln!(out, "\n### Soak: HTTP `tools/call` while the plugin is replaced\n");
            let _ = writeln!(
                out,
                "| calls | concurrency | failed | reloads made / applied | answers v1 / v2 | took | calls/s | p50 / p99 |"
            );
            let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} / {} | {} / {} | {:.1} s | {:.0} | {} / {} |",
                soak.plan.calls,
                soak.plan.concurrency,
                soak.failed,
                soak.plan.reloads,
                soak.reloads_applied,
                soak.answers[0],
                soak.answers[1],
                soak.elapsed.as_secs_f64(),
                soak.calls_per_second(),
                human(soak.latency.p50),
                human(soak.latency.p99)
            );
            let _ = writeln!(
                out,
                "\n| Warden | at start | after warm-up ({} clients, {} reloads) | at the end |",
                soak.plan.concurrency, soak.warmup_reloads
            );
            let _ = writeln!(out, "|---|---|---|---|");
            let _ = writeln!(
                out,
                "| RSS | {} | {} | {} |",
                mib(soak.start.rss),
                mib(soak.warm.rss),
                mib(soak.end.rss)
            );
            let _ = writeln!(
                out,
                "| open fds | {} | {} | {} |",
                soak.start.fds, soak.warm.fds, soak.end.fds
            );
        }

        if !self.devloop.is_empty() {
            out.push_str(&devloop::markdown(&self.devloop));
        }

        let _ = writeln!(out, "\n### Targets\n");
        let _ = writeln!(out, "| target | measured | |");
        let _ = writeln!(out, "|---|---|---|");
        for (target, measured, met) in self.targets() {
            let _ = writeln!(out, "| {target} | {measured} | {} |", verdict(met));
        }
        let _ = writeln!(
            out,
            "\nThe whole run took {:.0} s on {} CPU(s).",
            self.elapsed.as_secs_f64(),
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        out
    }

    pub fn json(&self) -> Value {
        let stdio: Vec<Value> = self
            .stdio
            .iter()
            .map(|((tool, side), f)| {
                let cpu_us = f.server_cpu_per_call.as_micros() as u64;
                json!({ "tool": tool, "side": side, "server_cpu_per_call_us": cpu_us, "latency": f.latency.to_json() })
            })
            .collect();
        let http: Vec<Value> = self
            .http
            .iter()
            .map(|((tool, concurrency, side), figures)| {
                json!({
                    "tool": tool,
                    "concurrency": concurrency,
                    "side": side,
                    "calls_per_second": (figures.throughput * 10.0).round() / 10.0,
                    "server_cpu_per_call_us": figures.server_cpu_per_call.as_micros() as u64,
                    "latency": figures.latency.to_json(),
                })
            })
            .collect();
        let startup: Vec<Value> = self
            .startup
            .iter()
            .map(
                |(plugins, (cold, warm))| json!({ "plugins": plugins, "cold": cold.to_json(), "warm": warm.to_json() }),
            )
            .collect();
        let large_startup: Vec<Value> = self
            .large_startup
            .iter()
            .map(|(label, cold, warm)| json!({ "component": label, "cold": cold.to_json(), "warm": warm.to_json() }))
            .collect();
        let memory: Vec<Value> = self
            .memory
            .iter()
            .map(|(what, side, bytes)| json!({ "what": what, "side": side, "bytes": bytes }))
            .collect();
        let idle: Vec<Value> = self
            .growth()
            .into_iter()
            .map(|(plugins, bytes, per_plugin)| {
                json!({ "plugins": plugins, "rss_bytes": bytes, "growth_per_plugin_bytes": per_plugin.map(f64::round) })
            })
            .collect();
        let targets: Vec<Value> = self
            .targets()
            .into_iter()
            .map(|(target, measured, met)| json!({ "target": target, "measured": measured, "met": met }))
            .collect();
        json!({
            "quick": self.quick,
            "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
            "elapsed_s": self.elapsed.as_secs_f64(),
            "stdio": stdio,
            "http": http,
            "startup": startup,
            "large_startup": large_startup,
            "native_startup": self.native_startup.map(Summary::to_json),
            "memory": memory,
            "idle_warm": idle,
            "layout": self.layout.map(|(found, listed)| json!({ "found": found, "listed": listed })),
            "breakdown": self.breakdown,
            "trivial_calls": self.trivial_calls.iter().map(TrivialCall::to_json).collect::<Vec<_>>(),
            "soak": self.soak.as_ref().map(soak::Outcome::to_json),
            "devloop": devloop::json(&self.devloop),
            "targets": targets,
        })
    }
}
