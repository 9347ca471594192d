//! The one `rmcp::ServerHandler`: every MCP request Warden answers.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, CompletionInfo,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, RequestStateCodec,
    ServerCapabilities, ServerConfig, SetLevelRequestMethod, SubscribeRequestMethod, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
// Deprecated in rmcp with all of logging (SEP-2577), but part of the
// 2025-11-25 wire Warden serves.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::Instrument;

use super::content::{self, ContentError};
use super::in_flight::{CallGuard, InFlight};
use super::interaction::{self, Asker, Binding, Driven, Retry, Wire};
use super::logging::{self, Level};
use super::notifier::Notifier;
use super::pagination;
use super::session::Session;
use super::tool_call;
use super::trace_context::TraceParent;
use crate::access::{self, Target};
use crate::principal::Principal;
use warden_plugins::catalog::CatalogHandle;
use warden_plugins::plugin::{CompletionRef, Plugin};
use warden_runtime::audit::{self, AuditLog, InvocationKind, Outcome};
use warden_runtime::contract::types;
use warden_runtime::metrics::{self, CallFacts};
use warden_runtime::{CallContext, CallFailure, CallReport, GuestEvent, Runtime, sandbox::EVENT_BACKLOG};

/// What every connection shares: one catalog, one runtime, one audit log,
/// and the notifier that tells every client when the catalog changes.
pub struct Shared {
    pub catalog: CatalogHandle,
    pub runtime: Arc<Runtime>,
    pub audit: Option<AuditLog>,
    pub in_flight: InFlight,
    pub notifier: Arc<Notifier>,
    /// Seals the `requestState` of 2026-07-28 input-required results.
    pub state_codec: RequestStateCodec,
    /// The `requestState`s this process accepted: each is accepted once.
    pub used_states: interaction::UsedStates,
}

/// The MCP server; cheap to clone, one per connection.
#[derive(Clone)]
pub struct WardenServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

impl WardenServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            session: Arc::new(Session::default()),
        }
    }
}

/// List and read results change only when plugins are reloaded (who may
/// share them: `cache_scope`).
const LIST_TTL_MS: u64 = 0;

/// What the audit record of one invocation says besides its outcome.
struct Audit<'a> {
    log: Option<&'a AuditLog>,
    plugin: Arc<str>,
    principal: Option<Arc<Principal>>,
    trace: Option<TraceParent>,
    kind: InvocationKind,
    target: String,
    argument_bytes: usize,
    started: Instant,
    timing: Option<audit::Timing>,
}

impl Audit<'_> {
    fn record(&self, outcome: Outcome, detail: Option<&str>, denied: &[String]) {
        if let Some(log) = self.log {
            let tool = (self.kind == InvocationKind::ToolCall).then_some(self.target.as_str());
            log.record(&audit::Record {
                time: audit::now(),
                plugin: &self.plugin,
                principal: self.principal.as_ref().map(|p| p.subject.as_str()),
                traceparent: self.trace.as_ref().map(TraceParent::as_str),
                kind: self.kind,
                target: &self.target,
                tool,
                exposed_name: tool,
                duration_ms: audit::millis(self.started.elapsed()),
                outcome,
                argument_bytes: self.argument_bytes,
                detail,
                denied,
                timing: self.timing,
            });
        }
    }
}

/// Cache hints (`ttlMs`, `cacheScope`) exist on the 2026-07-28 wire only,
/// and the removed methods (`logging/setLevel`, `resources/subscribe`) on the
/// 2025-11-25 wire only. The request's own era counts, not the session's.
fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

/// The OAuth principal a request over HTTP comes from (`None` on stdio, and
/// without OAuth: then everything served may be used).
fn principal(context: &RequestContext<RoleServer>) -> Option<Arc<Principal>> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<Arc<Principal>>()
        .cloned()
}

/// Who a sealed `requestState` is bound to: in OAuth mode the token's `sub`.
/// Without OAuth there is nothing better to bind to on the stateless
/// 2026-07-28 wire: no session, and every holder of the one bearer token (or,
/// with no authentication, every client) is the same principal; stdio has one
/// client. What a client declares about itself (`clientInfo`) is not
/// evidence of anything, so it is not used.
fn caller_identity(context: &RequestContext<RoleServer>) -> String {
    principal(context).map_or_else(String::new, |p| format!("oauth-sub:{}", p.subject))
}

/// The request's W3C trace context: `_meta.traceparent`, else the HTTP header.
fn trace(context: &RequestContext<RoleServer>) -> Option<TraceParent> {
    let header = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("traceparent"))
        .and_then(|value| value.to_str().ok());
    TraceParent::of_request(context.meta.get_traceparent(), header)
}

/// Whether the request's principal (if any) may use `target`.
fn visible(principal: Option<&Principal>, target: Target<'_>) -> bool {
    principal.is_none_or(|p| p.allows(target))
}

/// The refusal of a request outside the caller's grant. Over HTTP the
/// transport has already answered such a request `403`; this is the second
/// check, for anything that reaches the handler another way.
fn permitted(context: &RequestContext<RoleServer>, target: Target<'_>, what: &str) -> Result<(), McpError> {
    match principal(context) {
        Some(principal) if !principal.allows(target) => Err(McpError::invalid_request(
            format!("your access does not include {what}; ask the operator for a scope that grants it"),
            None,
        )),
        _ => Ok(()),
    }
}

/// `-32602` for a URI no plugin serves, with the URI in `data` as the
/// 2026-07-28 wire asks.
fn resource_not_found(uri: &str, detail: Option<String>) -> McpError {
    let message = detail.unwrap_or_else(|| {
        format!("no resource `{uri}`; call resources/list and resources/templates/list for what this server offers")
    });
    McpError::invalid_params(message, Some(serde_json::json!({ "uri": uri })))
}

/// Where one call's guest events go.
struct EventRoute {
    plugin: Arc<str>,
    progress: Option<ProgressToken>,
    log_level: Option<Level>,
}

/// Forwards a call's progress and log messages to the client until the
/// call's sandbox is dropped. Progress must increase; anything else is
/// dropped, as are log messages below the level the client asked for.
#[allow(deprecated)] // logging: see mcp/logging.rs
async fn forward_events(peer: Peer<RoleServer>, route: EventRoute, mut events: mpsc::Receiver<GuestEvent>) {
    let mut last = f64::NEG_INFINITY;
    while let Some(event) = events.recv().await {
        let sent = match event {
            GuestEvent::Progress {
                progress,
                total,
                message,
            } => {
                let Some(token) = &route.progress else { continue };
                if !progress.is_finite() || progress <= last {
                    continue;
                }
                last = progress;
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                if let Some(total) = total.filter(|t| t.is_finite()) {
                    param = param.with_total(total);
                }
                if let Some(message) = message {
                    param = param.with_message(message);
                }
                peer.notify_progress(param).await
            }
            GuestEvent::Log { level, message } => {
                let level = Level::from(level);
                match route.log_level {
                    Some(threshold) if level >= threshold => {
                        peer.notify_logging_message(logging::message(&route.plugin, level, message))
                            .await
                    }
                    _ => continue,
                }
            }
        };
        if sent.is_err() {
            break;
        }
    }
}

/// One plugin invocation on behalf of a request: its call context, the
/// task forwarding its events (which must finish before the response), and
/// its audit record. Every invocation — tool call, read, prompt get,
/// completion — goes through `WardenServer::invocation` and `finish`.
struct Invocation<'a> {
    call: CallContext,
    forwarder: Option<tokio::task::JoinHandle<()>>,
    audit: Audit<'a>,
    _running: CallGuard,
}

impl Invocation<'_> {
    /// Waits until every event of the (finished) call has been sent: progress
    /// and log messages come before the response, never after it.
    async fn flush(&mut self) {
        // The call's sender is the last one once the sandbox is gone.
        self.call.events = None;
        if let Some(task) = self.forwarder.take() {
            let _ = task.await;
        }
    }
}

/// How one invocation ended: the answer for the client, and what its audit
/// record says.
struct Ended<T> {
    answer: Result<T, McpError>,
    outcome: Outcome,
    /// A failure Warden (not the plugin) reported; by default, an error
    /// answer's message.
    detail: Option<String>,
    timing: Option<audit::Timing>,
    report: CallReport,
}

impl<T> Ended<T> {
    /// The plugin asked for input: the client answers and retries.
    fn asking(answer: T, mut report: CallReport, denied: Vec<String>) -> Self {
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
    fn refused(error: McpError, denied: Vec<String>) -> Self {
        Self {
            answer: Err(error),
            outcome: Outcome::Rejected,
            detail: None,
            timing: None,
            report: {
                let mut report = CallReport::default();
                report.add_interaction_denials(denied);
                report
            },
        }
    }

    /// A reply converted to the answer, or to an error and its outcome.
    fn of(converted: Result<T, (Outcome, McpError)>, report: CallReport) -> Self {
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
}

/// A request named a tool, prompt, resource or template the catalog does
/// not hold: counted without the name, which the client chose.
fn unknown_target(kind: InvocationKind) {
    if let Some(metrics) = metrics::get() {
        metrics.unknown_target(kind);
    }
}

/// A plugin failure outside a tool call is a JSON-RPC error: the request
/// could not be answered.
fn failure_error(failure: &CallFailure, plugin: &Plugin, what: &str) -> McpError {
    let text = failure.describe(&plugin.name, &plugin.manifest_name(), what);
    tracing::warn!("{text}");
    McpError::internal_error(text, None)
}

fn content_error(error: &ContentError, plugin: &Plugin, what: &str) -> McpError {
    let text = error.describe(&plugin.name, &plugin.manifest_name(), what);
    tracing::warn!("{text}");
    McpError::internal_error(text, None)
}

impl WardenServer {
    /// The level at or above which this request's plugin logs reach the client.
    fn log_level(&self, context: &RequestContext<RoleServer>) -> Option<Level> {
        if is_2026(context) {
            logging::requested(&context.meta)
        } else {
            self.session.log_level()
        }
    }

    /// How this request's plugin may reach the client for input.
    fn asker<'a>(&'a self, context: &RequestContext<RoleServer>, plugin: &'a Plugin) -> Asker<'a> {
        let (wire, declared) = if is_2026(context) {
            (Wire::Stateless, context.meta.client_capabilities())
        } else {
            (
                Wire::Session(context.peer.clone()),
                context.peer.peer_info().map(|info| info.capabilities.clone()),
            )
        };
        Asker {
            wire,
            client: interaction::client_asks(declared.as_ref()),
            grant: &plugin.prepared.settings.grants.interaction,
            codec: &self.shared.state_codec,
            cancel: context.ct.clone(),
            timeout: plugin.prepared.settings.limits.timeout,
            output: plugin.prepared.settings.limits.output,
            manifest: plugin.manifest_name(),
            caller: caller_identity(context),
            used: &self.shared.used_states,
        }
    }

    /// Runs one plugin invocation — tool call, read, prompt get, completion —
    /// for `context`: `body` gets the call's context and start time, runs the
    /// plugin and converts its reply; then the call's progress and logs are
    /// flushed to the client, and the invocation is audited.
    async fn invoke<T>(
        &self,
        plugin: &Arc<str>,
        context: &RequestContext<RoleServer>,
        (kind, target, argument_bytes): (InvocationKind, &str, usize),
        body: impl AsyncFnOnce(CallContext, Instant) -> Ended<T>,
    ) -> Result<T, McpError> {
        let mut invocation = self.invocation(plugin, context, kind, target, argument_bytes);
        // Every log line of the call (Warden's and the plugin's) carries the
        // client's trace id.
        let span = match &invocation.audit.trace {
            Some(trace) => tracing::info_span!("call", trace_id = %trace.trace_id()),
            None => tracing::Span::none(),
        };
        let ended = body(invocation.call.clone(), invocation.audit.started)
            .instrument(span)
            .await;
        // The sandbox (and its event sender) is gone: flush progress and logs
        // before the response, never after it.
        invocation.flush().await;
        invocation.audit.timing = ended.timing;
        let detail = match (&ended.detail, &ended.answer) {
            (Some(detail), _) => Some(detail.as_str()),
            (None, Err(error)) => Some(error.message.as_ref()),
            (None, Ok(_)) => None,
        };
        invocation.audit.record(ended.outcome, detail, &ended.report.denials);
        if let Some(metrics) = metrics::get() {
            let audit = &invocation.audit;
            metrics.call(&CallFacts {
                kind: audit.kind,
                plugin: &audit.plugin,
                target: &audit.target,
                outcome: ended.outcome,
                duration: audit.started.elapsed(),
                timing: ended.timing,
                denials: ended.report.denied,
            });
        }
        ended.answer
    }

    fn invocation(
        &self,
        plugin: &Arc<str>,
        context: &RequestContext<RoleServer>,
        kind: InvocationKind,
        target: &str,
        argument_bytes: usize,
    ) -> Invocation<'_> {
        let route = EventRoute {
            plugin: plugin.clone(),
            progress: context.meta.get_progress_token(),
            log_level: self.log_level(context),
        };
        let (events, forwarder) = if route.progress.is_some() || route.log_level.is_some() {
            let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
            let task = tokio::spawn(forward_events(context.peer.clone(), route, receiver));
            (Some(sender), Some(task))
        } else {
            (None, None)
        };
        Invocation {
            call: CallContext {
                plugin: plugin.clone(),
                events,
                cancel: context.ct.clone(),
                // Set per round, from what the client declared and the plugin is granted.
                asks: Default::default(),
            },
            forwarder,
            audit: Audit {
                log: self.shared.audit.as_ref(),
                plugin: plugin.clone(),
                kind,
                target: target.to_string(),
                argument_bytes,
                principal: principal(context),
                trace: trace(context),
                started: Instant::now(),
                timing: None,
            },
            _running: self.shared.in_flight.enter(),
        }
    }
}

/// The cache scope of a list or read: in OAuth mode what is listed, and
/// what may be read, depend on the principal, so only its own client may
/// keep the answer; otherwise every client gets the same.
fn cache_scope(context: &RequestContext<RoleServer>) -> CacheScope {
    if principal(context).is_some() {
        CacheScope::Private
    } else {
        CacheScope::Public
    }
}

/// Sets the 2026-07-28 cache hints on a list or read result.
macro_rules! cache_hints {
    ($result:expr, $context:expr) => {
        if is_2026($context) {
            $result.with_ttl_ms(LIST_TTL_MS).with_cache_scope(cache_scope($context))
        } else {
            $result
        }
    };
}

// Logging and `resources/subscribe` are deprecated in rmcp (they are gone
// from the 2026-07-28 wire) but are part of the 2025-11-25 wire we serve.
#[allow(deprecated)]
impl ServerHandler for WardenServer {
    fn get_info(&self) -> ServerConfig {
        let supported = self.shared.notifier.supported();
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .build();
        // `listChanged` only when the catalog can change while serving.
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = supported.tools.then_some(true);
        }
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.subscribe = Some(true);
            resources.list_changed = supported.resources.then_some(true);
        }
        if let Some(prompts) = capabilities.prompts.as_mut() {
            prompts.list_changed = supported.prompts.then_some(true);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("warden", env!("CARGO_PKG_VERSION"))
                    .with_title("Warden")
                    .with_description("Tools, resources and prompts from sandboxed WebAssembly plugins"),
            )
            .with_instructions(
                "Tools here run in sandboxed WebAssembly plugins with only the access the operator granted. \
                 A result with isError explains what went wrong; fix the arguments and retry when it says so.",
            )
    }

    /// The tool's declaration, for rmcp's HTTP service: it checks a
    /// `tools/call`'s `Mcp-Param-*` headers against the body for the
    /// properties marked `x-mcp-header` (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        Some(self.shared.catalog.snapshot().tool(name)?.decl().tool.clone())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A handshake-era session: list changes and resource updates reach it
        // through its peer.
        self.shared.notifier.register_session(context.peer, &self.session);
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // rmcp narrows this to what was requested and what `get_info` advertises.
        let supported = self.shared.notifier.supported();
        let mut filter = SubscriptionFilter::default();
        filter.tools_list_changed = supported.tools.then_some(true);
        filter.resources_list_changed = supported.resources.then_some(true);
        filter.prompts_list_changed = supported.prompts.then_some(true);
        // Only URIs some plugin serves can be subscribed to. A list over the
        // limits is accepted empty; `listen` then refuses it with an error.
        // rmcp gives this no request, so no principal: in OAuth mode the
        // HTTP layer has already taken what the grant does not reach out of
        // the request (`scope_check::narrow_listen`), and `listen` checks
        // each update against the grant again.
        let catalog = self.shared.catalog.snapshot();
        filter.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            if self.shared.notifier.limits().check_list(uris).is_err() {
                return Vec::new();
            }
            uris.iter()
                .filter(|uri| access::may_subscribe(None, &catalog, uri))
                .cloned()
                .collect()
        });
        Some(filter)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if let Some(uris) = &context.requested().resource_subscriptions {
            self.shared.notifier.limits().check_list(uris)?;
        }
        let mut swaps = self.shared.notifier.subscribe();
        let accepted = context.accepted().clone();
        let subscriber = principal(context.request_context());
        let mut subscribed = accepted.resource_subscriptions.clone().unwrap_or_default();
        let catalog = self.shared.catalog.snapshot();
        subscribed.retain(|uri| access::may_subscribe(subscriber.as_ref().map(|p| &p.grant), &catalog, uri));
        drop(catalog);
        loop {
            let (changes, swap) = tokio::select! {
                () = context.cancelled() => return Ok(()),
                swapped = swaps.next() => match swapped {
                    Some(swapped) => swapped,
                    // The server is shutting down: end the stream gracefully.
                    None => return Ok(()),
                },
            };
            let sink = context.sink();
            let sent = async {
                if changes.tools && accepted.tools_list_changed == Some(true) {
                    sink.notify_tool_list_changed().await?;
                }
                if changes.resources && accepted.resources_list_changed == Some(true) {
                    sink.notify_resource_list_changed().await?;
                }
                if changes.prompts && accepted.prompts_list_changed == Some(true) {
                    sink.notify_prompt_list_changed().await?;
                }
                // Each update follows the policy in force: a grant removed
                // since the stream opened ends that subscription.
                let grant = subscriber.as_ref().map(|p| p.permissions_now());
                let mut ended = Vec::new();
                for uri in subscribed.iter().filter(|uri| swap.updated(uri)) {
                    if access::may_deliver(grant.as_ref(), &swap, uri) {
                        sink.notify_resource_updated(uri.clone()).await?;
                    } else {
                        ended.push(uri.clone());
                    }
                }
                Ok::<_, rmcp::service::SubscriptionSendError>(ended)
            };
            match sent.await {
                Ok(ended) if !ended.is_empty() => {
                    tracing::info!(
                        principal = subscriber.as_ref().map(|p| p.subject.as_str()),
                        "ended {} subscriptions of a stream: the access policy no longer grants them",
                        ended.len()
                    );
                    subscribed.retain(|uri| !ended.contains(uri));
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!("subscription stream ended: {error}");
                    return Ok(());
                }
            }
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            // Removed from the 2026-07-28 wire: a request carries its level.
            return Err(McpError::method_not_found::<SetLevelRequestMethod>());
        }
        self.session.set_log_level(request.level.into());
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let principal = principal(&context);
        let shown: Vec<_> = catalog
            .tools()
            .iter()
            .filter(|t| {
                let target = Target::Tool {
                    plugin: &t.plugin.name,
                    name: &t.decl().tool.name,
                };
                visible(principal.as_deref(), target)
            })
            .collect();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (range, next) = pagination::page(cursor, shown.len())?;
        let tools = shown[range].iter().map(|t| t.decl().tool.clone()).collect();
        let mut result = cache_hints!(ListToolsResult::with_all_items(tools), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let principal = principal(&context);
        let shown: Vec<_> = catalog
            .resources()
            .iter()
            .filter(|r| {
                let target = Target::Resource {
                    plugin: &r.plugin.name,
                    uri: &r.decl().resource.uri,
                    template: None,
                };
                visible(principal.as_deref(), target)
            })
            .collect();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (range, next) = pagination::page(cursor, shown.len())?;
        let resources = shown[range].iter().map(|r| r.decl().resource.clone()).collect();
        let mut result = cache_hints!(ListResourcesResult::with_all_items(resources), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let principal = principal(&context);
        let shown: Vec<_> = catalog
            .templates()
            .iter()
            .filter(|t| {
                let template = t.decl().template.uri_template.as_str();
                let target = Target::Resource {
                    plugin: &t.plugin.name,
                    uri: template,
                    template: Some(template),
                };
                visible(principal.as_deref(), target)
            })
            .collect();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (range, next) = pagination::page(cursor, shown.len())?;
        let templates = shown[range].iter().map(|t| t.decl().template.clone()).collect();
        let mut result = cache_hints!(ListResourceTemplatesResult::with_all_items(templates), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let uri = request.uri;
        let Some((plugin, template)) = catalog.resource_source(&uri) else {
            unknown_target(InvocationKind::ResourceRead);
            return Err(resource_not_found(&uri, None));
        };
        let target = Target::Resource {
            plugin: &plugin.name,
            uri: &uri,
            template,
        };
        permitted(&context, target, &format!("the resource `{uri}`"))?;
        let limit = plugin.prepared.settings.limits.output;
        let invocation = (InvocationKind::ResourceRead, uri.as_str(), uri.len());
        let asker = self.asker(&context, plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let binding = Binding::new(&asker.caller, &plugin.sha256, "resources/read", &uri, b"");
        let prepare = |asked| asker.prepare(asked);
        let contents = self
            .invoke(&plugin.name, &context, invocation, async |call, _| {
                let mut denied = Vec::new();
                let driven = interaction::drive(&asker, &binding, retry, &mut denied, |input, asks| {
                    let mut call = call.clone();
                    call.asks = asks;
                    let (runtime, uri, prepare) = (&self.shared.runtime, &uri, &prepare);
                    async move { plugin.read_resource(runtime, uri, input.as_ref(), call, prepare).await }
                })
                .await;
                let (reply, mut report) = match driven {
                    Ok(Driven::Done(reply, report)) => (reply, report),
                    Ok(Driven::InputRequired(asked, report)) => {
                        return Ended::asking(ReadResourceResponse::InputRequired(asked), report, denied);
                    }
                    Err(error) => return Ended::refused(error, denied),
                };
                report.add_interaction_denials(denied);
                let what = format!("a read of `{uri}`");
                let converted = match reply {
                    Err(failure) => Err((failure.outcome(), failure_error(&failure, plugin, &what))),
                    Ok(Err(types::Error::NotFound(why) | types::Error::InvalidArguments(why))) => {
                        match content::plugin_text(why, limit) {
                            Ok(why) => Err((
                                Outcome::ToolError,
                                resource_not_found(&uri, Some(format!("no resource `{uri}`: {why}"))),
                            )),
                            Err(error) => Err((Outcome::OutputLimit, content_error(&error, plugin, &what))),
                        }
                    }
                    Ok(Err(types::Error::Failed(why))) => match content::plugin_text(why, limit) {
                        Ok(why) => Err((
                            Outcome::ToolError,
                            McpError::internal_error(
                                format!("plugin `{}` could not read `{uri}`: {why}", plugin.name),
                                Some(serde_json::json!({ "uri": uri })),
                            ),
                        )),
                        Err(error) => Err((Outcome::OutputLimit, content_error(&error, plugin, &what))),
                    },
                    // A read that finds nothing is "not found", never empty contents.
                    Ok(Ok(contents)) if contents.is_empty() => {
                        Err((Outcome::ToolError, resource_not_found(&uri, None)))
                    }
                    Ok(Ok(contents)) => content::read_contents(contents, limit)
                        .map_err(|error| (error.outcome(), content_error(&error, plugin, &what))),
                };
                Ended::of(
                    converted.map(|contents| cache_hints!(ReadResourceResult::new(contents), &context).into()),
                    report,
                )
            })
            .await?;
        Ok(contents)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            return Err(McpError::method_not_found::<SubscribeRequestMethod>());
        }
        let limits = self.shared.notifier.limits();
        limits.check_uri(&request.uri)?;
        let catalog = self.shared.catalog.snapshot();
        let subscriber = principal(&context);
        // Unknown and ungranted are one answer: a subscription must not tell
        // a principal which URIs the plugins it may not use serve.
        if !access::may_subscribe(subscriber.as_ref().map(|p| &p.grant), &catalog, &request.uri) {
            if let Some(principal) = &subscriber
                && let Some((plugin, _)) = catalog.resource_source(&request.uri)
            {
                // The operator learns of the probe; the client does not.
                let detail = "a subscription outside the caller's grant, answered as an unknown URI";
                tracing::info!(
                    principal = principal.subject,
                    "refused a subscription to `{}`: not in the caller's grant (answered as unknown)",
                    request.uri
                );
                Audit {
                    log: self.shared.audit.as_ref(),
                    plugin: plugin.name.clone(),
                    principal: Some(principal.clone()),
                    trace: trace(&context),
                    kind: InvocationKind::ResourceRead,
                    target: request.uri.clone(),
                    argument_bytes: request.uri.len(),
                    started: Instant::now(),
                    timing: None,
                }
                .record(Outcome::Forbidden, Some(detail), &[]);
            }
            return Err(resource_not_found(&request.uri, None));
        }
        if !self
            .session
            .subscribe(request.uri.clone(), subscriber, limits.per_client)
        {
            return Err(limits.full(&request.uri));
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            return Err(McpError::method_not_found::<UnsubscribeRequestMethod>());
        }
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let principal = principal(&context);
        let shown: Vec<_> = catalog
            .prompts()
            .iter()
            .filter(|p| {
                let target = Target::Prompt {
                    plugin: &p.plugin.name,
                    name: &p.decl().prompt.name,
                };
                visible(principal.as_deref(), target)
            })
            .collect();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (range, next) = pagination::page(cursor, shown.len())?;
        let prompts = shown[range].iter().map(|p| p.decl().prompt.clone()).collect();
        let mut result = cache_hints!(ListPromptsResult::with_all_items(prompts), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let Some(entry) = catalog.prompt(&request.name) else {
            unknown_target(InvocationKind::PromptGet);
            return Err(McpError::invalid_params(
                format!(
                    "unknown prompt `{}`; call prompts/list for the prompts this server offers",
                    request.name
                ),
                Some(serde_json::json!({ "name": request.name })),
            ));
        };
        let target = Target::Prompt {
            plugin: &entry.plugin.name,
            name: &entry.decl().prompt.name,
        };
        permitted(&context, target, &format!("the prompt `{}`", request.name))?;
        let mut arguments: Vec<(String, String)> = Vec::new();
        for (name, value) in request.arguments.unwrap_or_default() {
            // Prompt arguments are strings; other JSON is passed as its text.
            let value = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            arguments.push((name, value));
        }
        entry
            .decl()
            .check_arguments(arguments.iter().map(|(name, _)| name.as_str()))
            .map_err(|why| McpError::invalid_params(why, Some(serde_json::json!({ "name": request.name }))))?;
        let plugin = &entry.plugin;
        let limit = plugin.prepared.settings.limits.output;
        let argument_bytes = arguments.iter().map(|(name, value)| name.len() + value.len()).sum();
        let invocation = (InvocationKind::PromptGet, request.name.as_str(), argument_bytes);
        let asker = self.asker(&context, plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let bound_arguments = serde_json::to_vec(&arguments).unwrap_or_default();
        let binding = Binding::new(
            &asker.caller,
            &plugin.sha256,
            "prompts/get",
            &request.name,
            &bound_arguments,
        );
        let prepare = |asked| asker.prepare(asked);
        let result = self
            .invoke(&plugin.name, &context, invocation, async |call, _| {
                let mut denied = Vec::new();
                let driven = interaction::drive(&asker, &binding, retry, &mut denied, |input, asks| {
                    let mut call = call.clone();
                    call.asks = asks;
                    let (runtime, name, arguments) = (&self.shared.runtime, &request.name, &arguments);
                    let prepare = &prepare;
                    async move {
                        plugin
                            .get_prompt(runtime, name, arguments, input.as_ref(), call, prepare)
                            .await
                    }
                })
                .await;
                let (reply, mut report) = match driven {
                    Ok(Driven::Done(reply, report)) => (reply, report),
                    Ok(Driven::InputRequired(asked, report)) => {
                        return Ended::asking(GetPromptResponse::InputRequired(asked), report, denied);
                    }
                    Err(error) => return Ended::refused(error, denied),
                };
                report.add_interaction_denials(denied);
                let what = format!("prompt `{}`", request.name);
                let converted = match reply {
                    Err(failure) => Err((failure.outcome(), failure_error(&failure, plugin, &what))),
                    Ok(Err(types::Error::NotFound(why) | types::Error::InvalidArguments(why))) => {
                        match content::plugin_text(why, limit) {
                            Ok(why) => Err((
                                Outcome::ToolError,
                                McpError::invalid_params(
                                    format!("{what}: {why}"),
                                    Some(serde_json::json!({ "name": request.name })),
                                ),
                            )),
                            Err(error) => Err((Outcome::OutputLimit, content_error(&error, plugin, &what))),
                        }
                    }
                    Ok(Err(types::Error::Failed(why))) => match content::plugin_text(why, limit) {
                        Ok(why) => Err((
                            Outcome::ToolError,
                            McpError::internal_error(
                                format!("plugin `{}` could not render {what}: {why}", plugin.name),
                                None,
                            ),
                        )),
                        Err(error) => Err((Outcome::OutputLimit, content_error(&error, plugin, &what))),
                    },
                    Ok(Ok(reply)) => content::prompt_result(reply, limit)
                        .map_err(|error| (error.outcome(), content_error(&error, plugin, &what))),
                };
                Ended::of(converted.map(GetPromptResponse::from), report)
            })
            .await?;
        Ok(result)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let (plugin, reference, target) = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let Some(entry) = catalog.prompt(&prompt.name) else {
                    unknown_target(InvocationKind::Completion);
                    return Err(McpError::invalid_params(
                        format!("unknown prompt `{}`", prompt.name),
                        Some(serde_json::json!({ "name": prompt.name })),
                    ));
                };
                (&entry.plugin, CompletionRef::Prompt(prompt.name.clone()), &prompt.name)
            }
            Reference::Resource(template) => {
                let Some(entry) = catalog.template(&template.uri) else {
                    unknown_target(InvocationKind::Completion);
                    return Err(McpError::invalid_params(
                        format!(
                            "unknown resource template `{}`; call resources/templates/list for the templates",
                            template.uri
                        ),
                        Some(serde_json::json!({ "uri": template.uri })),
                    ));
                };
                (
                    &entry.plugin,
                    CompletionRef::ResourceTemplate(template.uri.clone()),
                    &template.uri,
                )
            }
            _ => return Ok(CompleteResult::default()),
        };
        let access_target = match &reference {
            CompletionRef::Prompt(name) => Target::Prompt {
                plugin: &plugin.name,
                name,
            },
            CompletionRef::ResourceTemplate(template) => Target::Resource {
                plugin: &plugin.name,
                uri: template,
                template: Some(template),
            },
        };
        permitted(&context, access_target, &format!("`{target}`"))?;
        let argument_bytes = request.argument.name.len() + request.argument.value.len();
        let invocation = (InvocationKind::Completion, target.as_str(), argument_bytes);
        let completion = self
            .invoke(&plugin.name, &context, invocation, async |call, _| {
                let (reply, report) = plugin
                    .complete(
                        &self.shared.runtime,
                        &reference,
                        &request.argument.name,
                        &request.argument.value,
                        call,
                    )
                    .await;
                let what = "`complete`";
                let converted = reply
                    .map_err(|failure| (failure.outcome(), failure_error(&failure, plugin, what)))
                    .and_then(|values| {
                        content::completion_values(
                            values,
                            CompletionInfo::MAX_VALUES,
                            plugin.prepared.settings.limits.output,
                        )
                        .map_err(|error| (error.outcome(), content_error(&error, plugin, what)))
                    })
                    .and_then(|(values, total, has_more)| {
                        CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more)
                            .map_err(|e| (Outcome::ToolError, McpError::internal_error(e, None)))
                    });
                Ended::of(converted, report)
            })
            .await?;
        Ok(CompleteResult::new(completion))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let Some(entry) = catalog.tool(&request.name) else {
            unknown_target(InvocationKind::ToolCall);
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; call tools/list for the tools this server offers",
                    request.name
                ),
                Some(serde_json::json!({ "name": request.name })),
            ));
        };
        let decl = entry.decl();
        let plugin = &entry.plugin;
        let target = Target::Tool {
            plugin: &plugin.name,
            name: &decl.tool.name,
        };
        permitted(&context, target, &format!("the tool `{}`", request.name))?;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let invocation = (
            InvocationKind::ToolCall,
            request.name.as_ref(),
            arguments.to_string().len(),
        );
        let asker = self.asker(&context, plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let result = self
            .invoke(&plugin.name, &context, invocation, async |call, started| {
                let call = tool_call::run(
                    &self.shared.runtime,
                    plugin,
                    decl,
                    &request.name,
                    &arguments,
                    call,
                    started,
                    &asker,
                    retry,
                )
                .await;
                // A rejected call never reached a sandbox: it has no timings.
                let timing = (call.outcome != Outcome::Rejected).then(|| audit::Timing {
                    validate_us: audit::micros(call.validated),
                    setup_us: audit::micros(call.report.setup),
                    instantiate_us: audit::micros(call.report.instantiate),
                    guest_us: audit::micros(call.report.run),
                    convert_us: audit::micros(call.converted),
                });
                // A tool's failure is a result (`isError`), never a JSON-RPC error;
                // only a request the client could not make is.
                Ended {
                    answer: call.result,
                    outcome: call.outcome,
                    detail: call.detail,
                    timing,
                    report: call.report,
                }
            })
            .await?;
        Ok(result)
    }
}
