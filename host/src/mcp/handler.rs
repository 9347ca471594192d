//! The one `rmcp::ServerHandler`: every MCP request Warden answers.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities, ServerConfig,
    SubscriptionFilter,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::sync::mpsc;

use super::content::{self, ContentError};
use super::in_flight::InFlight;
use super::notifier::{ListChanges, Notifier};
use super::pagination;
use crate::audit::{self, AuditLog, Outcome};
use crate::catalog::CatalogHandle;
use crate::declarations;
use crate::runtime::{CallContext, GuestEvent, Runtime, sandbox::EVENT_BACKLOG};

/// What every connection shares: one catalog, one runtime, one audit log,
/// and the notifier that tells every client when the catalog changes.
pub struct Shared {
    pub catalog: CatalogHandle,
    pub runtime: Arc<Runtime>,
    pub audit: Option<AuditLog>,
    pub in_flight: InFlight,
    pub notifier: Arc<Notifier>,
}

/// The MCP server; cheap to clone, one per connection.
#[derive(Clone)]
pub struct WardenServer {
    shared: Arc<Shared>,
}

impl WardenServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

/// List results change only when plugins are reloaded, and the catalog is
/// the same for every client.
const LIST_TTL_MS: u64 = 0;

struct Audit<'a> {
    log: Option<&'a AuditLog>,
    plugin: &'a str,
    tool: &'a str,
    argument_bytes: usize,
    started: Instant,
}

impl Audit<'_> {
    fn record(&self, outcome: Outcome, detail: Option<&str>) {
        self.record_with(outcome, detail, &[]);
    }

    fn record_with(&self, outcome: Outcome, detail: Option<&str>, denied: &[String]) {
        if let Some(log) = self.log {
            log.record(&audit::Record {
                time: audit::now(),
                plugin: self.plugin,
                tool: self.tool,
                exposed_name: self.tool,
                duration_ms: audit::millis(self.started.elapsed()),
                outcome,
                argument_bytes: self.argument_bytes,
                detail,
                denied,
            });
        }
    }
}

/// Cache hints (`ttlMs`, `cacheScope`) exist on the 2026-07-28 wire only.
fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Forwards a call's progress to the client until the call's sandbox is
/// dropped. Progress must increase; anything else is dropped.
async fn forward_progress(peer: Peer<RoleServer>, token: ProgressToken, mut events: mpsc::Receiver<GuestEvent>) {
    let mut last = f64::NEG_INFINITY;
    while let Some(event) = events.recv().await {
        let GuestEvent::Progress {
            progress,
            total,
            message,
        } = event
        else {
            continue;
        };
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
        if peer.notify_progress(param).await.is_err() {
            break;
        }
    }
}

impl ServerHandler for WardenServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        // `listChanged` only when the catalog can change while serving.
        if self.shared.notifier.supported().tools
            && let Some(tools) = capabilities.tools.as_mut()
        {
            tools.list_changed = Some(true);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("warden", env!("CARGO_PKG_VERSION"))
                    .with_title("Warden")
                    .with_description("Tools from sandboxed WebAssembly plugins"),
            )
            .with_instructions(
                "Tools here run in sandboxed WebAssembly plugins with only the access the operator granted. \
                 A result with isError explains what went wrong; fix the arguments and retry when it says so.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A handshake-era session: list changes reach it through its peer.
        self.shared.notifier.register_session(context.peer);
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // rmcp narrows this to what was requested and what `get_info` advertises.
        let supported = self.shared.notifier.supported();
        let mut filter = SubscriptionFilter::default();
        filter.tools_list_changed = supported.tools.then_some(true);
        filter.resources_list_changed = supported.resources.then_some(true);
        filter.prompts_list_changed = supported.prompts.then_some(true);
        Some(filter)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let mut changes = self.shared.notifier.subscribe();
        let accepted = context.accepted().clone();
        loop {
            let changes = tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.recv() => match changed {
                    Ok(changes) => changes,
                    // Missed some: every list may have changed.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => ListChanges {
                        tools: true,
                        resources: true,
                        prompts: true,
                    },
                    // The server is shutting down: end the stream gracefully.
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
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
                Ok::<(), rmcp::service::SubscriptionSendError>(())
            };
            if let Err(error) = sent.await {
                tracing::debug!("subscription stream ended: {error}");
                return Ok(());
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let (range, next) = pagination::page(cursor, catalog.tools().len())?;
        let tools = catalog.tools()[range].iter().map(|t| t.decl().tool.clone()).collect();
        let mut result = ListToolsResult::with_all_items(tools);
        if is_2026(&context) {
            result = result.with_ttl_ms(LIST_TTL_MS).with_cache_scope(CacheScope::Public);
        }
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let catalog = self.shared.catalog.snapshot();
        let Some(entry) = catalog.tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; call tools/list for the tools this server offers",
                    request.name
                ),
                Some(serde_json::json!({ "name": request.name })),
            ));
        };
        let _running = self.shared.in_flight.enter();
        let decl = entry.decl();
        let plugin = &entry.plugin;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let arguments_text = arguments.to_string();
        let audit = Audit {
            log: self.shared.audit.as_ref(),
            plugin: &plugin.name,
            tool: &request.name,
            argument_bytes: arguments_text.len(),
            started: Instant::now(),
        };

        let violations = declarations::violations(&decl.input, &arguments);
        if !violations.is_empty() {
            audit.record(Outcome::Rejected, None);
            return Ok(error_result(format!(
                "the arguments do not match the input schema of `{}`:\n- {}",
                request.name,
                violations.join("\n- ")
            ))
            .into());
        }

        let (events, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
                let task = tokio::spawn(forward_progress(context.peer.clone(), token, receiver));
                (Some(sender), Some(task))
            }
            None => (None, None),
        };
        let call = CallContext {
            plugin: plugin.name.clone(),
            events,
            cancel: context.ct.clone(),
        };
        let (reply, report) = plugin
            .call_tool(&self.shared.runtime, &request.name, arguments_text, call)
            .await;
        // The sandbox (and its event sender) is gone: flush progress before
        // the response, never after it.
        if let Some(task) = forwarder {
            let _ = task.await;
        }

        let tool_desc = format!("`{}`", request.name);
        let result = match reply {
            Err(failure) => {
                let text = failure.describe(&plugin.name, &plugin.manifest_name(), &tool_desc);
                audit.record_with(Outcome::from_failure(failure.outcome()), Some(&text), &report.denials);
                error_result(text)
            }
            Ok(Err(tool_error)) => {
                let text = content::tool_error(tool_error);
                audit.record_with(Outcome::ToolError, None, &report.denials);
                error_result(text)
            }
            Ok(Ok(reply)) => match content::call_result(reply, decl, plugin.prepared.policy.limits.output) {
                Ok(result) => {
                    let outcome = if result.is_error == Some(true) {
                        Outcome::ToolError
                    } else {
                        Outcome::Ok
                    };
                    audit.record(outcome, None);
                    result
                }
                Err(error) => {
                    let text = error.describe(&plugin.name, &plugin.manifest_name(), &request.name);
                    let outcome = match error {
                        ContentError::TooLarge { .. } => Outcome::OutputLimit,
                        ContentError::Malformed(_) => Outcome::ToolError,
                    };
                    tracing::warn!("{text}");
                    audit.record_with(outcome, Some(&text), &report.denials);
                    error_result(text)
                }
            },
        };
        Ok(result.into())
    }
}
