//! What a request carries besides its params: the wire era it speaks, the
//! principal it comes from (and what it may use), and its trace context.

use std::sync::Arc;

use rmcp::model::CacheScope;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};

use crate::errors::not_permitted;
use crate::principal::Principal;
use crate::resolve::PluginRequest;
use crate::trace_context::TraceParent;

/// List and read results change only when plugins are reloaded (who may
/// share them: `cache_scope`).
pub(crate) const LIST_TTL_MS: u64 = 0;

/// Cache hints (`ttlMs`, `cacheScope`) exist on the 2026-07-28 wire only,
/// and the removed methods (`logging/setLevel`, `resources/subscribe`) on the
/// 2025-11-25 wire only. The request's own era counts, not the session's.
pub(crate) fn is_2026(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str())
}

/// The OAuth principal a request over HTTP comes from (`None` on stdio, and
/// without OAuth: then everything served may be used).
pub(crate) fn principal(context: &RequestContext<RoleServer>) -> Option<Arc<Principal>> {
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
pub(crate) fn caller_identity(context: &RequestContext<RoleServer>) -> String {
    principal(context).map_or_else(String::new, |p| format!("oauth-sub:{}", p.subject))
}

/// The request's W3C trace context: `_meta.traceparent`, else the HTTP header.
pub(crate) fn trace(context: &RequestContext<RoleServer>) -> Option<TraceParent> {
    let header = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("traceparent"))
        .and_then(|value| value.to_str().ok());
    TraceParent::of_request(context.meta.get_traceparent(), header)
}

/// The refusal of a request outside the caller's grant. Over HTTP the
/// transport has already answered such a request `403`; this is the second
/// check, for anything that reaches the handler another way.
pub(crate) fn permitted(
    context: &RequestContext<RoleServer>,
    request: &PluginRequest,
    what: &str,
) -> Result<(), McpError> {
    match principal(context) {
        Some(principal) if !principal.allows(request.access_target()) => Err(not_permitted(what)),
        _ => Ok(()),
    }
}

/// The cache scope of a list or read: in OAuth mode what is listed, and
/// what may be read, depend on the principal, so only its own client may
/// keep the answer; otherwise every client gets the same.
pub(crate) fn cache_scope(context: &RequestContext<RoleServer>) -> CacheScope {
    if principal(context).is_some() {
        CacheScope::Private
    } else {
        CacheScope::Public
    }
}

/// Sets the 2026-07-28 cache hints on a list or read result (a macro: each
/// result type has its own `with_ttl_ms` and `with_cache_scope`).
macro_rules! cache_hints {
    ($result:expr, $context:expr) => {
        if $crate::request_context::is_2026($context) {
            $result
                .with_ttl_ms($crate::request_context::LIST_TTL_MS)
                .with_cache_scope($crate::request_context::cache_scope($context))
        } else {
            $result
        }
    };
}
pub(crate) use cache_hints;
