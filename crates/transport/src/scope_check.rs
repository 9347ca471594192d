//! OAuth mode, before rmcp sees a request: a call to a tool, resource or
//! prompt the principal's grant does not reach is answered `403` with
//! `error="insufficient_scope"` and the scopes that would reach it (MCP's
//! authorization spec), and audited with the principal's subject. Lists are
//! filtered, and calls checked again, in the MCP handler (`access` holds
//! the rule both use). A `subscriptions/listen` has the URIs the grant does
//! not reach taken out before rmcp acknowledges it (`narrow_listen`).

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::auth::resource_metadata::ResourceMetadata;
use warden_mcp::Shared;
use warden_mcp::access::{self, AccessPolicy, Target};
use warden_mcp::principal::Principal;
use warden_mcp::trace_context::TraceParent;
use warden_plugins::catalog::Catalog;
use warden_runtime::audit::{self, InvocationKind, Outcome};
use warden_runtime::metrics::{self, CallFacts};

/// A JSON-RPC request as the HTTP layer reads it: its method and params,
/// and the rest (`jsonrpc`, `id`) kept to encode it again.
#[derive(Deserialize, Serialize)]
pub struct Message {
    method: String,
    #[serde(default)]
    params: Value,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

impl Message {
    /// The request in a POST body; `None` for anything else (a response, a
    /// batch, not JSON), which rmcp answers.
    pub fn parse(body: &[u8]) -> Option<Self> {
        serde_json::from_slice(body).ok()
    }
}

/// What a request would invoke: its kind, plugin and target as audited.
struct PluginRequest {
    kind: InvocationKind,
    plugin: Arc<str>,
    target: String,
    /// For completions and templated reads: the template.
    template: Option<String>,
    name: Option<String>,
}

impl PluginRequest {
    fn target(&self) -> Target<'_> {
        match (self.kind, &self.name) {
            (InvocationKind::ToolCall, Some(name)) => Target::Tool {
                plugin: &self.plugin,
                name,
            },
            (InvocationKind::PromptGet | InvocationKind::Completion, Some(name)) => Target::Prompt {
                plugin: &self.plugin,
                name,
            },
            _ => Target::Resource {
                plugin: &self.plugin,
                uri: &self.target,
                template: self.template.as_deref(),
            },
        }
    }
}

/// The `403` for a request `principal` may not make, if it is one.
pub fn refusal(
    shared: &Shared,
    principal: &Principal,
    policy: &AccessPolicy,
    metadata: &ResourceMetadata,
    traceparent_header: Option<&str>,
    message: &Message,
) -> Option<Response> {
    let catalog = shared.catalog.snapshot();
    let invocation = invocation(&catalog, message)?;
    let target = invocation.target();
    if principal.allows(target) {
        return None;
    }
    let scopes = policy.scopes_for(target);
    let meta = message.params.pointer("/_meta/traceparent").and_then(Value::as_str);
    let trace = TraceParent::of_request(meta, traceparent_header);
    let what = match invocation.kind {
        InvocationKind::ToolCall => "tool",
        InvocationKind::PromptGet | InvocationKind::Completion if invocation.name.is_some() => "prompt",
        _ => "resource",
    };
    let why = format!("your access does not include the {what} `{}`", invocation.target);
    tracing::info!(
        principal = principal.subject,
        trace_id = trace.as_ref().map(TraceParent::trace_id),
        plugin = &*invocation.plugin,
        "refused {} of `{}`: not in the caller's grant",
        invocation.kind.as_str(),
        invocation.target
    );
    if let Some(log) = &shared.audit {
        log.record(&audit::Record {
            time: audit::now(),
            plugin: &invocation.plugin,
            principal: Some(&principal.subject),
            traceparent: trace.as_ref().map(TraceParent::as_str),
            kind: invocation.kind,
            target: &invocation.target,
            tool: (invocation.kind == InvocationKind::ToolCall).then_some(invocation.target.as_str()),
            exposed_name: (invocation.kind == InvocationKind::ToolCall).then_some(invocation.target.as_str()),
            duration_ms: 0.0,
            outcome: Outcome::Forbidden,
            argument_bytes: 0,
            detail: Some(&why),
            denied: &[],
            timing: None,
        });
    }
    if let Some(metrics) = metrics::get() {
        metrics.call(&CallFacts {
            kind: invocation.kind,
            plugin: &invocation.plugin,
            target: &invocation.target,
            outcome: Outcome::Forbidden,
            duration: std::time::Duration::ZERO,
            timing: None,
            denials: Default::default(),
        });
    }
    let mut response = (StatusCode::FORBIDDEN, format!("{why}\n")).into_response();
    if let Ok(value) = HeaderValue::from_str(&metadata.insufficient_scope(&scopes, &why)) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

/// A `subscriptions/listen` body without the `resourceSubscriptions` that
/// `principal`'s grant does not reach (or that nothing serves), re-encoded
/// from what was parsed here, so rmcp acknowledges exactly what is left;
/// `None` for any other request, which goes on unchanged. rmcp asks the
/// handler which subscriptions to acknowledge without the request (so
/// without the principal): this is where an ungranted URI is dropped from
/// the acknowledgment, exactly as an unknown one is.
pub fn narrow_listen(shared: &Shared, principal: &Principal, message: Message) -> Option<Vec<u8>> {
    let mut message = message;
    if message.method != "subscriptions/listen" {
        return None;
    }
    let catalog = shared.catalog.snapshot();
    if let Some(Value::Array(uris)) = message.params.pointer_mut("/notifications/resourceSubscriptions") {
        uris.retain(|uri| {
            uri.as_str()
                .is_some_and(|uri| access::may_subscribe(Some(&principal.grant), &catalog, uri))
        });
    }
    serde_json::to_vec(&message).ok()
}

/// The plugin invocation a JSON-RPC request asks for; `None` for anything
/// else, and for names no plugin serves (the handler answers those).
fn invocation(catalog: &Catalog, message: &Message) -> Option<PluginRequest> {
    let params = &message.params;
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    match message.method.as_str() {
        "tools/call" => {
            let entry = catalog.tool(text("name")?)?;
            let name = entry.decl().tool.name.to_string();
            Some(PluginRequest {
                kind: InvocationKind::ToolCall,
                plugin: entry.plugin.name.clone(),
                target: name.clone(),
                template: None,
                name: Some(name),
            })
        }
        "prompts/get" => {
            let entry = catalog.prompt(text("name")?)?;
            let name = entry.decl().prompt.name.clone();
            Some(PluginRequest {
                kind: InvocationKind::PromptGet,
                plugin: entry.plugin.name.clone(),
                target: name.clone(),
                template: None,
                name: Some(name),
            })
        }
        // Not `resources/subscribe`: an ungranted URI is refused there as an
        // unknown one (`access::may_subscribe`), never with a `403` that
        // would confirm it exists.
        "resources/read" => {
            let uri = text("uri")?;
            let (plugin, template) = catalog.resource_source(uri)?;
            Some(PluginRequest {
                kind: InvocationKind::ResourceRead,
                plugin: plugin.name.clone(),
                target: uri.to_string(),
                template: template.map(str::to_string),
                name: None,
            })
        }
        "completion/complete" => {
            let reference = params.get("ref")?;
            match reference.get("type").and_then(Value::as_str)? {
                "ref/prompt" => {
                    let entry = catalog.prompt(reference.get("name").and_then(Value::as_str)?)?;
                    let name = entry.decl().prompt.name.clone();
                    Some(PluginRequest {
                        kind: InvocationKind::Completion,
                        plugin: entry.plugin.name.clone(),
                        target: name.clone(),
                        template: None,
                        name: Some(name),
                    })
                }
                "ref/resource" => {
                    let entry = catalog.template(reference.get("uri").and_then(Value::as_str)?)?;
                    let template = entry.decl().template.uri_template.clone();
                    Some(PluginRequest {
                        kind: InvocationKind::Completion,
                        plugin: entry.plugin.name.clone(),
                        target: template.clone(),
                        template: Some(template),
                        name: None,
                    })
                }
                _ => None,
            }
        }
        _ => None,
    }
}
