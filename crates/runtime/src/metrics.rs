//! What Warden counts for Prometheus (`warden serve --metrics ADDR`): calls
//! by plugin, target and outcome, their latency (whole call, instantiation,
//! and the guest's own work), refused accesses by kind, reloads and load
//! failures, where compiled code came from, instances in use, and HTTP
//! responses by status.
//!
//! The metrics exist only when `--metrics` is given (`install`); otherwise
//! every `record_*` is one atomic load. Each is recorded where the fact is
//! already known — the audit path of the handler, the reconciler, the
//! in-flight guard, an HTTP layer — and served on a listener of its own.
//!
//! Label values are bounded: plugin, tool, prompt and template names come
//! from the catalog (a request for a name it does not hold is counted
//! without its name, in `warden_unknown_targets_total`), resource URIs are
//! never a label (a template matches unboundedly many), and every other
//! label is a closed set.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder, prometheus_text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::audit::{InvocationKind, Outcome, Timing};
use crate::cache::CodeOrigin;

/// Latency buckets, in seconds: from half a millisecond (a cached tool's
/// whole call) to a minute (past the default 30 s time limit).
const BUCKETS: [f64; 16] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// The target label of a resource read: URIs are not labels.
const ANY_URI: &str = "*";

impl EncodeLabelValue for InvocationKind {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(self.as_str())
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(self.as_str())
    }
}

/// A refused access, by what was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DenialKind {
    /// An outgoing HTTP request (`[network] allow`).
    Http,
    /// A socket connect, bind or send (`[network] tcp`/`udp`).
    Socket,
    /// An elicitation or sampling request the manifest does not grant.
    Interaction,
}

impl DenialKind {
    pub const ALL: [DenialKind; 3] = [DenialKind::Http, DenialKind::Socket, DenialKind::Interaction];

    pub fn as_str(self) -> &'static str {
        match self {
            DenialKind::Http => "http",
            DenialKind::Socket => "socket",
            DenialKind::Interaction => "interaction",
        }
    }
}

impl EncodeLabelValue for DenialKind {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(self.as_str())
    }
}

/// How many accesses of each kind one call had refused (all of them, also
/// those the audit record only counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DenialCounts([u64; 3]);

impl DenialCounts {
    pub fn add(&mut self, kind: DenialKind, count: u64) {
        self.0[kind as usize] += count;
    }

    pub fn get(&self, kind: DenialKind) -> u64 {
        self.0[kind as usize]
    }

    pub fn merge(&mut self, other: DenialCounts) {
        for kind in DenialKind::ALL {
            self.add(kind, other.get(kind));
        }
    }
}

/// What happened to a plugin in a load or reconciliation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadEvent {
    Loaded,
    Reloaded,
    Unloaded,
    Failed,
}

impl EncodeLabelValue for LoadEvent {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(match self {
            LoadEvent::Loaded => "loaded",
            LoadEvent::Reloaded => "reloaded",
            LoadEvent::Unloaded => "unloaded",
            LoadEvent::Failed => "failed",
        })
    }
}

impl EncodeLabelValue for CodeOrigin {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CallLabels {
    kind: InvocationKind,
    plugin: Arc<str>,
    target: Arc<str>,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TargetLabels {
    kind: InvocationKind,
    plugin: Arc<str>,
    target: Arc<str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PluginLabels {
    plugin: Arc<str>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TaskLabels {
    plugin: Arc<str>,
    event: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DenialLabels {
    plugin: Arc<str>,
    kind: DenialKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KindLabels {
    kind: InvocationKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct LoadLabels {
    event: LoadEvent,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OriginLabels {
    origin: CodeOrigin,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StatusLabels {
    code: u16,
}

#[derive(Clone)]
struct Buckets;

impl MetricConstructor<Histogram> for Buckets {
    fn new_metric(&self) -> Histogram {
        Histogram::new(BUCKETS)
    }
}

/// Every metric Warden exports, and the registry that encodes them.
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    call_seconds: Family<TargetLabels, Histogram, Buckets>,
    instantiate_seconds: Family<PluginLabels, Histogram, Buckets>,
    guest_seconds: Family<TargetLabels, Histogram, Buckets>,
    denials: Family<DenialLabels, Counter>,
    unknown: Family<KindLabels, Counter>,
    plugin_events: Family<LoadLabels, Counter>,
    code: Family<OriginLabels, Counter>,
    instances: Gauge,
    http: Family<StatusLabels, Counter>,
    tasks_running: Family<PluginLabels, Gauge>,
    task_events: Family<TaskLabels, Counter>,
    audit_failures: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let calls = Family::default();
        registry.register(
            "warden_calls",
            "Plugin invocations, by kind (tool-call, resource-read, prompt-get, completion), plugin, target (tool, prompt or template name; * for a resource read) and outcome (as in the audit log)",
            calls.clone(),
        );
        let call_seconds = Family::new_with_constructor(Buckets);
        registry.register(
            "warden_call_duration_seconds",
            "Whole invocations, from the request reaching the handler to the answer, in seconds",
            call_seconds.clone(),
        );
        let instantiate_seconds = Family::new_with_constructor(Buckets);
        registry.register(
            "warden_instantiate_duration_seconds",
            "Instantiating a plugin's component in a fresh sandbox, per tool call that reached the plugin (on its path, or ahead of it for a sandbox prepared after the previous call), in seconds",
            instantiate_seconds.clone(),
        );
        let guest_seconds = Family::new_with_constructor(Buckets);
        registry.register(
            "warden_guest_duration_seconds",
            "The plugin's own work inside the sandbox, per tool call that reached the plugin, in seconds",
            guest_seconds.clone(),
        );
        let denials = Family::default();
        registry.register(
            "warden_denials",
            "Accesses the sandbox or the interaction grants refused, by plugin and kind (http, socket, interaction)",
            denials.clone(),
        );
        let unknown = Family::default();
        registry.register(
            "warden_unknown_targets",
            "Requests naming a tool, prompt, resource or template no loaded plugin serves (the name is not recorded)",
            unknown.clone(),
        );
        let plugin_events = Family::default();
        registry.register(
            "warden_plugin_loads",
            "Plugins loaded, reloaded, unloaded, and failed to load, at start and on hot reload",
            plugin_events.clone(),
        );
        let code = Family::default();
        registry.register(
            "warden_plugin_code",
            "Where a loaded plugin's compiled code came from: compiled, cache (the on-disk compiled-code cache) or reused (an already loaded plugin with the same bytes)",
            code.clone(),
        );
        let instances = Gauge::default();
        registry.register(
            "warden_instances_in_use",
            "Plugin invocations running now, each in a sandbox instance of its own",
            instances.clone(),
        );
        let http = Family::default();
        registry.register(
            "warden_http_requests",
            "Responses of the MCP HTTP listener, by status code",
            http.clone(),
        );
        let tasks_running = Family::default();
        registry.register(
            "warden_tasks_running",
            "MCP tasks this replica is running now, by plugin",
            tasks_running.clone(),
        );
        let task_events = Family::default();
        registry.register(
            "warden_task_events",
            "MCP task events, by plugin and event: created, input_required, working, completed, failed, cancelled, cancel_requested, expired",
            task_events.clone(),
        );
        let audit_failures = Counter::default();
        registry.register(
            "warden_audit_write_failures",
            "Audit records that could not be written (a full disk, an I/O error); with --audit-required, each refused an invocation",
            audit_failures.clone(),
        );
        Self {
            tasks_running,
            task_events,
            audit_failures,
            registry,
            calls,
            call_seconds,
            instantiate_seconds,
            guest_seconds,
            denials,
            unknown,
            plugin_events,
            code,
            instances,
            http,
        }
    }

    /// An audit record that could not be written.
    pub fn audit_write_failed(&self) {
        self.audit_failures.inc();
    }

    /// One audited invocation. `target` must be a name the catalog holds
    /// (or the URI of a read, which is not recorded).
    pub fn call(&self, call: &CallFacts<'_>) {
        let target: Arc<str> = if call.kind == InvocationKind::ResourceRead {
            Arc::from(ANY_URI)
        } else {
            Arc::from(call.target)
        };
        let labels = TargetLabels {
            kind: call.kind,
            plugin: call.plugin.clone(),
            target,
        };
        self.call_seconds
            .get_or_create(&labels)
            .observe(call.duration.as_secs_f64());
        if let Some(timing) = call.timing {
            let plugin = PluginLabels {
                plugin: call.plugin.clone(),
            };
            self.instantiate_seconds
                .get_or_create(&plugin)
                .observe((timing.instantiate_us + timing.instantiated_ahead_us) as f64 / 1e6);
            self.guest_seconds
                .get_or_create(&labels)
                .observe(timing.guest_us as f64 / 1e6);
        }
        for kind in DenialKind::ALL {
            let count = call.denials.get(kind);
            if count > 0 {
                self.denials
                    .get_or_create(&DenialLabels {
                        plugin: call.plugin.clone(),
                        kind,
                    })
                    .inc_by(count);
            }
        }
        let TargetLabels { kind, plugin, target } = labels;
        self.calls
            .get_or_create(&CallLabels {
                kind,
                plugin,
                target,
                outcome: call.outcome,
            })
            .inc();
    }

    pub fn unknown_target(&self, kind: InvocationKind) {
        self.unknown.get_or_create(&KindLabels { kind }).inc();
    }

    pub fn plugin_event(&self, event: LoadEvent) {
        self.plugin_events.get_or_create(&LoadLabels { event }).inc();
    }

    pub fn code_origin(&self, origin: CodeOrigin) {
        self.code.get_or_create(&OriginLabels { origin }).inc();
    }

    /// A task of `plugin` started (`1`) or ended (`-1`) running here.
    pub fn task_running(&self, plugin: &str, delta: i64) {
        self.tasks_running
            .get_or_create(&PluginLabels { plugin: plugin.into() })
            .inc_by(delta);
    }

    pub fn task_event(&self, plugin: &str, event: &'static str) {
        self.task_events
            .get_or_create(&TaskLabels {
                plugin: plugin.into(),
                event,
            })
            .inc();
    }

    pub fn instance_started(&self) {
        self.instances.inc();
    }

    pub fn instance_ended(&self) {
        self.instances.dec();
    }

    pub fn http_response(&self, status: StatusCode) {
        self.http.get_or_create(&StatusLabels { code: status.as_u16() }).inc();
    }

    /// Everything, in the Prometheus text format (0.0.4).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_text::encode(&mut text, &self.registry).expect("writing to a String cannot fail");
        text
    }
}

/// What the audit record of one invocation says, for `Metrics::call`.
pub struct CallFacts<'a> {
    pub kind: InvocationKind,
    pub plugin: &'a Arc<str>,
    pub target: &'a str,
    pub outcome: Outcome,
    pub duration: Duration,
    pub timing: Option<Timing>,
    pub denials: DenialCounts,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// Starts recording (once per process); `--metrics` calls it before
/// anything is loaded.
pub fn install() -> &'static Metrics {
    METRICS.get_or_init(Metrics::new)
}

/// The metrics, when they are recorded.
pub fn get() -> Option<&'static Metrics> {
    METRICS.get()
}

/// Counts each response of the MCP listener by status (an axum layer).
pub async fn count_responses(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if let Some(metrics) = get() {
        metrics.http_response(response.status());
    }
    response
}

/// Serves `GET /metrics` (and nothing else: every other path is `404`) on
/// a listener of its own, until the process ends.
pub async fn serve(addr: SocketAddr) -> Result<SocketAddr> {
    let metrics = install();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for --metrics"))?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        tracing::warn!(
            "serving metrics on {local}, which is not loopback: /metrics has no authentication and names every plugin and tool"
        );
    }
    let router = Router::new()
        .route(
            "/metrics",
            routing::get(move || async move {
                (
                    [(header::CONTENT_TYPE, prometheus_text::CONTENT_TYPE)],
                    metrics.encode(),
                )
                    .into_response()
            }),
        )
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found; metrics are at /metrics\n") });
    tracing::info!("serving metrics at http://{local}/metrics");
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!("the metrics listener failed: {error}");
        }
    });
    Ok(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(plugin: &'a Arc<str>, target: &'a str, outcome: Outcome) -> CallFacts<'a> {
        CallFacts {
            kind: InvocationKind::ToolCall,
            plugin,
            target,
            outcome,
            duration: Duration::from_millis(3),
            timing: Some(Timing {
                instantiate_us: 200,
                guest_us: 1000,
                ..Timing::default()
            }),
            denials: DenialCounts::default(),
        }
    }

    #[test]
    fn calls_are_counted_by_plugin_target_and_outcome() {
        let metrics = Metrics::new();
        let plugin: Arc<str> = Arc::from("calc");
        for _ in 0..3 {
            metrics.call(&facts(&plugin, "add", Outcome::Ok));
        }
        let mut failed = facts(&plugin, "add", Outcome::ToolError);
        failed.denials.add(DenialKind::Http, 2);
        metrics.call(&failed);
        let text = metrics.encode();
        assert!(
            text.contains("warden_calls_total{kind=\"tool-call\",plugin=\"calc\",target=\"add\",outcome=\"ok\"} 3\n"),
            "{text}"
        );
        assert!(text.contains(
            "warden_calls_total{kind=\"tool-call\",plugin=\"calc\",target=\"add\",outcome=\"tool-error\"} 1\n"
        ));
        assert!(text.contains("warden_denials_total{plugin=\"calc\",kind=\"http\"} 2\n"));
        assert!(text.contains(
            "warden_call_duration_seconds_bucket{kind=\"tool-call\",plugin=\"calc\",target=\"add\",le=\"0.005\"} 4\n"
        ));
        assert!(text.contains(
            "warden_guest_duration_seconds_bucket{kind=\"tool-call\",plugin=\"calc\",target=\"add\",le=\"0.001\"} 4\n"
        ));
        assert!(text.contains("warden_instantiate_duration_seconds_count{plugin=\"calc\"} 4\n"));
        assert!(text.contains("# TYPE warden_calls_total counter\n"), "{text}");
    }

    #[test]
    fn a_resource_uri_is_never_a_label() {
        let metrics = Metrics::new();
        let plugin: Arc<str> = Arc::from("files");
        let mut read = facts(&plugin, "file:///secret/42", Outcome::Ok);
        read.kind = InvocationKind::ResourceRead;
        read.timing = None;
        metrics.call(&read);
        let text = metrics.encode();
        assert!(!text.contains("secret"), "{text}");
        assert!(
            text.contains(
                "warden_calls_total{kind=\"resource-read\",plugin=\"files\",target=\"*\",outcome=\"ok\"} 1\n"
            )
        );
    }
}
