//! One plugin invocation on behalf of a request — tool call, read, prompt
//! get, completion, or one refused before it started — and the one place
//! its audit record and its metrics are made.

use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;

use crate::principal::Principal;
use crate::resolve::PluginRequest;
use crate::trace_context::TraceParent;
use warden_runtime::CallReport;
use warden_runtime::audit::{self, Outcome};
use warden_runtime::audit_log::AuditLog;
use warden_runtime::metrics::{self, CallFacts, DenialCounts};

/// Who invoked what, for the audit record and the metrics.
pub struct Invocation<'a> {
    log: Option<&'a AuditLog>,
    request: PluginRequest,
    principal: Option<&'a Principal>,
    trace: Option<TraceParent>,
    argument_bytes: usize,
    /// `None` for an invocation refused before it started: it took no time.
    started: Option<Instant>,
}

/// What an invocation's record says besides its outcome.
#[derive(Default)]
pub struct Facts<'a> {
    /// A failure Warden (not the plugin) reported.
    pub detail: Option<&'a str>,
    /// The accesses the plugin was refused, as audited and as counted.
    pub denials: &'a [String],
    pub denied: DenialCounts,
    pub timing: Option<audit::Timing>,
}

impl<'a> Invocation<'a> {
    /// An invocation that started at `started`.
    pub fn start(
        log: Option<&'a AuditLog>,
        request: PluginRequest,
        principal: Option<&'a Principal>,
        trace: Option<TraceParent>,
        argument_bytes: usize,
        started: Instant,
    ) -> Self {
        Self {
            log,
            request,
            principal,
            trace,
            argument_bytes,
            started: Some(started),
        }
    }

    /// An invocation refused before it started (the HTTP layer's `403`):
    /// no time, no arguments counted.
    pub fn refused_before_start(
        log: Option<&'a AuditLog>,
        request: PluginRequest,
        principal: &'a Principal,
        trace: Option<TraceParent>,
    ) -> Self {
        Self {
            log,
            request,
            principal: Some(principal),
            trace,
            argument_bytes: 0,
            started: None,
        }
    }

    pub fn trace(&self) -> Option<&TraceParent> {
        self.trace.as_ref()
    }

    fn elapsed(&self) -> Duration {
        self.started.map_or(Duration::ZERO, |started| started.elapsed())
    }

    /// With `--audit-required`, writes that the invocation starts, before
    /// any plugin runs; when that cannot be written, the invocation is
    /// refused (and counted, not audited: the log is what fails).
    pub fn admit(&self) -> Result<(), McpError> {
        let Some(log) = self.log else { return Ok(()) };
        let request = &self.request;
        let start = audit::Start {
            time: audit::now(),
            plugin: &request.plugin,
            principal: self.principal.map(|p| p.subject.as_str()),
            traceparent: self.trace.as_ref().map(TraceParent::as_str),
            kind: request.kind,
            target: &request.target,
            phase: "started",
        };
        log.admit(&start).map_err(|why| {
            self.count(Outcome::Unavailable, &Facts::default(), Duration::ZERO);
            McpError::internal_error(why.0, None)
        })
    }

    /// Audits and counts the invocation as ended `outcome`.
    pub fn record(&self, outcome: Outcome, facts: Facts<'_>) {
        let duration = self.elapsed();
        self.audit(outcome, &facts, duration);
        self.count(outcome, &facts, duration);
    }

    fn count(&self, outcome: Outcome, facts: &Facts<'_>, duration: Duration) {
        if let Some(metrics) = metrics::get() {
            metrics.call(&CallFacts {
                kind: self.request.kind,
                plugin: &self.request.plugin,
                target: &self.request.target,
                outcome,
                duration,
                timing: facts.timing,
                denials: facts.denied,
            });
        }
    }

    /// Audits, without counting, what is not a call: a subscription refused
    /// as if its URI were unknown.
    pub(crate) fn audit_only(&self, outcome: Outcome, facts: Facts<'_>) {
        self.audit(outcome, &facts, self.elapsed());
    }

    fn audit(&self, outcome: Outcome, facts: &Facts<'_>, duration: Duration) {
        let Some(log) = self.log else { return };
        let request = &self.request;
        // The detail and the refusals may quote the plugin (an error it
        // answered, a host it tried): its secrets never reach the audit log.
        let redactor = &request.redactor;
        let detail = facts.detail.map(|detail| redactor.redact(detail));
        let denied: Vec<String> = facts
            .denials
            .iter()
            .map(|denial| redactor.redact(denial).into_owned())
            .collect();
        let tool = (request.kind == audit::InvocationKind::ToolCall).then_some(request.target.as_str());
        log.record(&audit::Record {
            time: audit::now(),
            plugin: &request.plugin,
            principal: self.principal.map(|p| p.subject.as_str()),
            traceparent: self.trace.as_ref().map(TraceParent::as_str),
            kind: request.kind,
            target: &request.target,
            tool,
            exposed_name: tool,
            duration_ms: audit::millis(duration),
            outcome,
            argument_bytes: self.argument_bytes,
            detail: detail.as_deref(),
            denied: &denied,
            timing: facts.timing,
            source: request.origin.as_deref().map(|origin| audit::Source {
                reference: &origin.reference,
                digest: &origin.manifest_digest,
                signer: origin.signer.as_deref(),
            }),
        });
    }
}

/// How one invocation ended: the answer for the client, and what its audit
/// record says.
pub struct Ended<T> {
    /// The answer; on the 2026-07-28 wire, possibly "answer these first";
    /// an error for a request the client cannot make (a bad `requestState`,
    /// a capability it lacks).
    pub answer: Result<T, McpError>,
    pub outcome: Outcome,
    /// A failure Warden (not the plugin) reported; by default, an error
    /// answer's message.
    pub detail: Option<String>,
    pub timing: Option<audit::Timing>,
    pub report: CallReport,
}

impl<T> Ended<T> {
    /// The plugin asked for input: the client answers and retries.
    pub(crate) fn asking(answer: T, mut report: CallReport, denied: Vec<String>) -> Self {
        report.add_interaction_denials(denied);
        Self {
            answer: Ok(answer),
            outcome: Outcome::InputRequired,
            detail: None,
            timing: None,
            report,
        }
    }

    /// A request the client could not make (a bad `requestState`, a
    /// capability it lacks).
    pub(crate) fn refused(error: McpError, denied: Vec<String>) -> Self {
        let mut report = CallReport::default();
        report.add_interaction_denials(denied);
        Self {
            answer: Err(error),
            outcome: Outcome::Rejected,
            detail: None,
            timing: None,
            report,
        }
    }

    /// A reply converted to the answer, or to an error and its outcome.
    pub(crate) fn of(converted: Result<T, (Outcome, McpError)>, report: CallReport) -> Self {
        let (answer, outcome) = match converted {
            Ok(answer) => (Ok(answer), Outcome::Ok),
            Err((outcome, error)) => (Err(error), outcome),
        };
        Self {
            answer,
            outcome,
            detail: None,
            timing: None,
            report,
        }
    }

    /// What the audit record says besides the outcome.
    pub(crate) fn facts(&self) -> Facts<'_> {
        let detail = match (&self.detail, &self.answer) {
            (Some(detail), _) => Some(detail.as_str()),
            (None, Err(error)) => Some(error.message.as_ref()),
            (None, Ok(_)) => None,
        };
        Facts {
            detail,
            denials: &self.report.denials,
            denied: self.report.denied,
            timing: self.timing,
        }
    }
}
