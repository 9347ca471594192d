//! OAuth mode, before rmcp sees a request: a call to a tool, resource or
//! prompt the principal's grant does not reach is answered `403` with
//! `error="insufficient_scope"` and the scopes that would reach it (MCP's
//! authorization spec), and audited with the principal's subject. Lists are
//! filtered, and calls checked again, in the MCP handler (`access` holds
//! the rule both use). A `subscriptions/listen` has the URIs the grant does
//! not reach taken out before rmcp acknowledges it (`narrow_listen`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::auth::resource_metadata::ResourceMetadata;
use warden_mcp::Shared;
use warden_mcp::access::{self, AccessPolicy};
use warden_mcp::invocation::{Facts, Invocation};
use warden_mcp::principal::Principal;
use warden_mcp::resolve;
use warden_mcp::trace_context::TraceParent;
use warden_runtime::audit::Outcome;

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
    let request = resolve::request(&catalog, &message.method, &message.params)?;
    let target = request.access_target();
    if principal.allows(target) {
        return None;
    }
    let scopes = policy.scopes_for(target);
    let meta = message.params.pointer("/_meta/traceparent").and_then(Value::as_str);
    let trace = TraceParent::of_request(meta, traceparent_header);
    let why = format!(
        "your access does not include the {} `{}`",
        request.noun(),
        request.target
    );
    tracing::info!(
        principal = principal.subject,
        trace_id = trace.as_ref().map(TraceParent::trace_id),
        plugin = &*request.plugin,
        "refused {} of `{}`: not in the caller's grant",
        request.kind.as_str(),
        request.target
    );
    let facts = Facts {
        detail: Some(&why),
        ..Facts::default()
    };
    Invocation::refused_before_start(shared.audit.as_deref(), request, principal, trace)
        .record(Outcome::Forbidden, facts);
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
