//! The Streamable HTTP transport: rmcp's `StreamableHttpService` at `/mcp`
//! inside an axum router, with the layers a shared server needs — bearer
//! authentication, caps on concurrent requests and live sessions, a deadline
//! for request bodies, and health endpoints — served on connections that
//! are themselves bounded (`connections`).
//!
//! Host and Origin validation (against DNS rebinding) and the body-size cap
//! are rmcp's, configured here: rmcp leaves Origin validation off by default.

use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body::Frame;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::authenticate::{Authentication, Caller};
use super::body_deadline;
use super::connections::{self, ConnectionLimits};
use super::drain;
use super::scope_check;
use super::session_owners::SessionOwners;
use super::sessions::{self, BoundedSessions};
use super::stateless_call::StatelessCalls;
use crate::auth::oauth::OAuth;
use crate::auth::resource_metadata::{self, ResourceMetadata};
use warden_mcp::{Shared, WardenServer};

/// How the HTTP endpoint is exposed.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The bearer token clients must present; `None` serves without auth,
    /// which is allowed on loopback only (or with `insecure_no_auth`).
    pub token: Option<String>,
    /// OAuth mode: access tokens from an authorization server, checked
    /// against the access policy (exclusive with `token`).
    pub oauth: Option<Arc<OAuth>>,
    pub insecure_no_auth: bool,
    /// `Host` values accepted, besides the loopback defaults.
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted, besides loopback origins.
    pub allowed_origins: Vec<String>,
    pub max_body_bytes: usize,
    pub max_concurrent_requests: usize,
    pub sse_keep_alive: Duration,
    /// How long in-flight calls may take to finish after a shutdown signal.
    pub shutdown_grace: Duration,
    pub connections: ConnectionLimits,
    /// How long a request body may take to arrive, from its head.
    pub body_timeout: Duration,
    /// Live 2025-11-25 sessions at once.
    pub max_sessions: usize,
    /// A session that sees no request for this long is ended.
    pub session_idle_timeout: Duration,
    /// Whether `/readyz` tells anyone what is loaded; otherwise only callers
    /// with the bearer token (when one is configured) learn it.
    pub public_readiness_details: bool,
    /// This replica's name: the prefix of its session ids (`--replica-id`).
    pub replica_id: Option<String>,
}

impl HttpOptions {
    /// Refuses configurations that would expose tools to the network
    /// without authentication.
    pub fn check(&self) -> Result<()> {
        if self.token.as_deref().is_some_and(|t| t.trim().is_empty()) {
            bail!("the auth token is empty; put a long random string in the token file or variable");
        }
        if self.token.is_some() && self.oauth.is_some() {
            bail!("give either a bearer token (--token-file, --token-env) or OAuth (--oauth-issuer), not both");
        }
        if !self.addr.ip().is_loopback() && self.token.is_none() && self.oauth.is_none() && !self.insecure_no_auth {
            bail!(
                "refusing to listen on {} without authentication: anyone who can reach it could run \
                 your tools. Give a token with --token-file or --token-env, use OAuth with --oauth-issuer, \
                 listen on 127.0.0.1, or pass --insecure-no-auth if something else in front of Warden \
                 authenticates clients",
                self.addr
            );
        }
        Ok(())
    }
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Serves MCP over HTTP until `shutdown` resolves, then drains: no new
/// connections (the listener closes at once), requests already received
/// are served, and in-flight tool calls get `shutdown_grace` to finish.
pub async fn serve(
    shared: Arc<Shared>,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    options.check()?;
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    let local = listener.local_addr()?;
    let sessions = CancellationToken::new();
    let authentication = match (&options.token, &options.oauth) {
        (Some(token), _) => Authentication::token(token),
        (None, Some(oauth)) => Authentication::OAuth {
            metadata: ResourceMetadata::new(&oauth.settings)?,
            oauth: oauth.clone(),
        },
        (None, None) => Authentication::Open,
    };
    let gate = Arc::new(Gate {
        authentication,
        shared: shared.clone(),
        max_body_bytes: options.max_body_bytes,
        owners: SessionOwners::new(),
        requests: Arc::new(Semaphore::new(options.max_concurrent_requests)),
        draining: CancellationToken::new(),
        sessions: Arc::new(BoundedSessions::new(
            options.max_sessions,
            options.session_idle_timeout,
            options.replica_id.clone(),
        )),
        admitting: Arc::default(),
        public_readiness_details: options.public_readiness_details,
        stateless: StatelessCalls::new(
            shared.clone(),
            &allowed_hosts(&options),
            options.max_body_bytes,
            options.sse_keep_alive,
            sessions.clone(),
        ),
    });
    let router = router(shared.clone(), &options, sessions.clone(), gate.clone());
    let auth = gate.authentication.describe();
    tracing::info!("serving MCP over HTTP at http://{local}/mcp ({auth})");

    let draining = gate.draining.clone();
    let stop = CancellationToken::new();
    let server = tokio::spawn(connections::serve(listener, router, options.connections, stop.clone()));

    shutdown.await;
    let grace = options.shutdown_grace;
    tracing::info!("shutting down: refusing new connections; waiting up to {grace:?} for calls in flight");
    draining.cancel();
    stop.cancel();
    // Running tasks are calls in flight: they get the grace too.
    shared.tasks.stop_taking();
    // A call's guard drops when its handler returns, a moment before its
    // response is written: `quiet` waits that long again before sessions
    // (whose SSE streams would otherwise stay open) are ended.
    if !drain::quiet(grace, RESPONSE_FLUSH, &shared.in_flight, &gate.admitting).await {
        tracing::warn!("calls still running after the {grace:?} grace period are abandoned");
    }
    let why =
        format!("the Warden replica running this task shut down before it finished (`--shutdown-grace` {grace:?})");
    let failed = shared.tasks.fail_running(&why).await;
    if failed > 0 {
        tracing::warn!("{failed} task(s) still running at shutdown were marked failed");
    }
    sessions.cancel();
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(joined) => joined.context("the HTTP server task failed")?,
        Err(_) => tracing::warn!("some connections did not close in time; exiting anyway"),
    }
    Ok(())
}

/// How long the last responses get to be written during shutdown.
const RESPONSE_FLUSH: Duration = Duration::from_millis(250);

/// The `Host` values accepted: loopback names and `--allowed-host`.
fn allowed_hosts(options: &HttpOptions) -> Vec<String> {
    LOOPBACK_HOSTS
        .iter()
        .map(|h| h.to_string())
        .chain(options.allowed_hosts.iter().cloned())
        .collect()
}

fn router(shared: Arc<Shared>, options: &HttpOptions, sessions: CancellationToken, gate: Arc<Gate>) -> Router {
    let hosts = allowed_hosts(options);
    let origins: Vec<String> = LOOPBACK_ORIGINS
        .iter()
        .map(|o| o.to_string())
        .chain(options.allowed_origins.iter().cloned())
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_sse_keep_alive(Some(options.sse_keep_alive))
        // 2026-07-28: a call whose first message is its answer is answered
        // as one JSON body (with a length, so the connection is kept);
        // a handler that first sends a notification or request gets an
        // SSE stream, so nothing is lost.
        .with_json_response(true)
        .with_cancellation_token(sessions);
    let factory_shared = shared.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(WardenServer::new(factory_shared.clone())),
        gate.sessions.clone(),
        config,
    );
    let mcp_routes = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(gate.clone(), admit))
        .layer(middleware::from_fn_with_state(gate.admitting.clone(), drain::track));
    let metadata = gate.authentication.resource_metadata().map(|m| {
        Router::new()
            .route(resource_metadata::WELL_KNOWN, get(protected_resource))
            .route(&m.path, get(protected_resource))
            .with_state(gate.clone())
    });
    let readiness = Readiness { shared, gate };
    let router = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(readiness)
        .merge(mcp_routes);
    router
        .merge(metadata.unwrap_or_default())
        .layer(middleware::from_fn_with_state(
            options.body_timeout,
            body_deadline::enforce,
        ))
        // Outermost, so every answer the router gives is counted (a
        // connection refused past --max-connections never reaches it).
        .layer(middleware::from_fn(warden_runtime::metrics::count_responses))
}

#[derive(Clone)]
struct Readiness {
    shared: Arc<Shared>,
    gate: Arc<Gate>,
}

/// Ready once the plugins folder has been loaded (the listener opens only
/// after that) and until shutdown begins. Only a caller with the bearer
/// token (or anyone, with `public_readiness_details`) learns what is served.
async fn ready(State(readiness): State<Readiness>, request: Request) -> Response {
    let Readiness { shared, gate } = readiness;
    let ready = !gate.draining.is_cancelled();
    let details = gate.public_readiness_details
        || (!matches!(gate.authentication, Authentication::Open)
            && gate.authentication.authenticate(request.headers()).await.is_ok());
    let body = if details {
        let catalog = shared.catalog.snapshot();
        serde_json::json!({
            "ready": ready,
            "plugins": catalog.plugins().len(),
            "tools": catalog.tools().len(),
            "sessions": gate.sessions.count().await,
        })
    } else {
        serde_json::json!({ "ready": ready })
    };
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{body}\n"),
    )
        .into_response()
}

/// RFC 9728's document: public, like the authorization server's metadata.
async fn protected_resource(State(gate): State<Arc<Gate>>) -> Response {
    match (gate.authentication.resource_metadata(), gate.authentication.oauth()) {
        (Some(metadata), Some(oauth)) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            metadata.document(&oauth.policy()),
        )
            .into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

struct Gate {
    authentication: Authentication,
    shared: Arc<Shared>,
    max_body_bytes: usize,
    /// OAuth mode: which principal opened each 2025-11-25 session.
    owners: SessionOwners,
    requests: Arc<Semaphore>,
    /// Set on shutdown: `/readyz` answers 503 while calls finish.
    draining: CancellationToken,
    sessions: Arc<BoundedSessions>,
    /// Requests being admitted, which the drain waits for.
    admitting: Arc<drain::Requests>,
    public_readiness_details: bool,
    /// The 2026-07-28 calls answered without rmcp's per-request service.
    stateless: StatelessCalls,
}

/// Authentication, then the concurrent-request cap. A request's permit is
/// held until its response body (an SSE stream, say) is finished or dropped,
/// so a vanished client frees its slot. A new session refused because the
/// server is full is answered `503` with a JSON-RPC error.
async fn admit(State(gate): State<Arc<Gate>>, mut request: Request, next: Next) -> Response {
    let caller = match gate.authentication.authenticate(request.headers()).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    // Before the body is read (OAuth mode reads it here): the cap bounds
    // how many bodies are held at once.
    let Ok(permit) = gate.requests.clone().try_acquire_owned() else {
        let mut response = (
            StatusCode::SERVICE_UNAVAILABLE,
            "too many concurrent requests; retry shortly\n",
        )
            .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    };
    let session = request
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut owner = None;
    if let Caller::Principal(principal) = caller {
        if let Some(session) = &session
            && !gate.owners.allows(session, &principal.subject)
        {
            tracing::info!(
                principal = principal.subject,
                "refused another principal's session; answered as if it did not exist"
            );
            return (StatusCode::NOT_FOUND, "session not found\n").into_response();
        }
        owner = Some(principal.subject.clone());
        request = match check_scope(&gate, &principal, request).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        // For the MCP handler: lists are filtered, calls checked and
        // audited with the subject. The token itself goes no further.
        request.extensions_mut().insert(principal);
        request.headers_mut().remove(header::AUTHORIZATION);
    }
    let request = match gate.stateless.answer(request).await {
        Ok(response) => return with_permit(response, permit),
        Err(request) => request,
    };
    let ends_session = request.method() == axum::http::Method::DELETE;
    let (response, refused) = sessions::refusing(next.run(request)).await;
    if refused {
        return sessions_full(&gate);
    }
    if let (Some(subject), None) = (&owner, &session)
        && let Some(created) = response.headers().get(SESSION_ID).and_then(|v| v.to_str().ok())
    {
        gate.owners.record(created, subject, &gate.sessions).await;
    }
    // rmcp answers a session's end with 202 Accepted; the official clients
    // expect 200 or 204 (the Python SDK logs every 202 as a failed
    // termination), and nothing is pending once the session is gone.
    if ends_session && response.status() == StatusCode::ACCEPTED {
        return StatusCode::NO_CONTENT.into_response();
    }
    with_permit(response, permit)
}

fn with_permit(response: Response, permit: OwnedSemaphorePermit) -> Response {
    response.map(|body| {
        Body::new(PermitBody {
            inner: body,
            _permit: permit,
        })
    })
}

/// OAuth mode: reads a POST's body (within the body cap) to refuse, with
/// `403`, a call outside the principal's grant; the body is handed on.
async fn check_scope(
    gate: &Gate,
    principal: &warden_mcp::principal::Principal,
    request: Request,
) -> Result<Request, Response> {
    let Some(oauth) = gate.authentication.oauth() else {
        return Ok(request);
    };
    let Some(metadata) = gate.authentication.resource_metadata() else {
        return Ok(request);
    };
    if request.method() != axum::http::Method::POST {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, gate.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body is over {} bytes, or did not arrive\n",
                    gate.max_body_bytes
                ),
            )
                .into_response());
        }
    };
    let traceparent = parts.headers.get("traceparent").and_then(|v| v.to_str().ok());
    // Parsed once for both checks; anything but a request goes on unchanged.
    let Some(message) = scope_check::Message::parse(&bytes) else {
        return Ok(Request::from_parts(parts, Body::from(bytes)));
    };
    if let Some(refused) = scope_check::refusal(
        &gate.shared,
        principal,
        &oauth.policy(),
        metadata,
        traceparent,
        &message,
    ) {
        return Err(refused);
    }
    let mut parts = parts;
    let body = match scope_check::narrow_listen(&gate.shared, principal, message) {
        Some(narrowed) => {
            parts
                .headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(narrowed.len()));
            Body::from(narrowed)
        }
        None => Body::from(bytes),
    };
    Ok(Request::from_parts(parts, body))
}

const SESSION_ID: &str = "mcp-session-id";

/// The answer to an `initialize` that would open one session too many.
fn sessions_full(gate: &Gate) -> Response {
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32000,
            "message": sessions::SessionsError::Full(gate.sessions.max()).to_string(),
        },
    });
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        format!("{error}\n"),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

/// A response body that holds a concurrency permit until it is dropped.
struct PermitBody {
    inner: Body,
    _permit: OwnedSemaphorePermit,
}

impl http_body::Body for PermitBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(addr: &str, token: Option<&str>, insecure: bool) -> HttpOptions {
        HttpOptions {
            addr: addr.parse().unwrap(),
            token: token.map(str::to_string),
            oauth: None,
            insecure_no_auth: insecure,
            allowed_hosts: vec![],
            allowed_origins: vec![],
            max_body_bytes: 1 << 20,
            max_concurrent_requests: 8,
            sse_keep_alive: Duration::from_secs(15),
            shutdown_grace: Duration::from_secs(1),
            connections: ConnectionLimits {
                max_connections: 8,
                max_connections_per_peer: 0,
                header_timeout: Duration::from_secs(10),
                write_timeout: Duration::from_secs(30),
            },
            body_timeout: Duration::from_secs(30),
            max_sessions: 8,
            session_idle_timeout: Duration::from_secs(300),
            public_readiness_details: false,
            replica_id: None,
        }
    }

    #[test]
    fn non_loopback_needs_a_token_or_the_loud_flag() {
        assert!(options("127.0.0.1:0", None, false).check().is_ok());
        assert!(options("[::1]:0", None, false).check().is_ok());
        let refused = options("0.0.0.0:8080", None, false).check().unwrap_err().to_string();
        assert!(
            refused.contains("refusing to listen on 0.0.0.0:8080 without authentication"),
            "{refused}"
        );
        assert!(options("0.0.0.0:8080", Some("s3cret-token"), false).check().is_ok());
        assert!(options("0.0.0.0:8080", None, true).check().is_ok());
        assert!(options("127.0.0.1:0", Some("  "), false).check().is_err());
    }
}
