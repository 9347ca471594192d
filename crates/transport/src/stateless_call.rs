//! The common case of the 2026-07-28 wire answered without rmcp's
//! per-request service: a `tools/call` whose answer is its only message.
//!
//! For every stateless request rmcp's HTTP service builds a service loop
//! with its own peer, channels and cancellation tokens, spawns it as a task
//! (which wakes another worker thread), and waits for the answer on a
//! channel. For a call that needs none of that — it asks for neither
//! progress nor logs, so nothing reaches the client before its answer —
//! this path runs the same handler (rmcp's dispatch of `WardenServer`) on
//! the connection's own task and writes the answer as rmcp would.
//!
//! It takes a request only when rmcp would accept it exactly as it is:
//! every check below is a sufficient condition for one of rmcp's (Host and
//! Origin, media types, body size, protocol version in header and `_meta`,
//! the SEP-2243 `Mcp-Method`/`Mcp-Name` headers, no `Mcp-Param-*` headers
//! to check). Anything else — a browser's `Origin`, an unusual `Accept`, a
//! malformed body, a header that disagrees — goes to rmcp unchanged, whose
//! answer (and error) it then is.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::Frame;
use tokio::sync::mpsc;
use tokio_util::sync::WaitForCancellationFutureOwned;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, GetExtensions, GetMeta, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerNotification, ServerResult,
};
use rmcp::service::{Peer, RequestContext, RunningService, Service};
use tokio_util::sync::CancellationToken;

use warden_mcp::{NotificationSink, Shared, WardenServer};

const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const METHOD: &str = "mcp-method";
const NAME: &str = "mcp-name";
const PARAM_PREFIX: &str = "mcp-param-";
/// How SEP-2243 marks a header value sent as Base64.
const BASE64_MARK: &str = "=?base64?";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// Answers the stateless calls it can take; see the module's comment.
pub(crate) struct StatelessCalls {
    shared: Arc<Shared>,
    server: WardenServer,
    /// A peer for handler contexts. Its transport never carries anything:
    /// the calls taken here send nothing to their client but the answer.
    peer: Peer<RoleServer>,
    _idle: RunningService<RoleServer, WardenServer>,
    _idle_end: tokio::io::DuplexStream,
    /// The `Host` values rmcp accepts (`--allowed-host` and loopback), as
    /// rmcp normalises them: lower case, without IPv6 brackets.
    hosts: Vec<(String, Option<u16>)>,
    max_body_bytes: usize,
    /// How often an SSE answer carries a comment while nothing else comes.
    keep_alive: Duration,
    /// Cancelled when the server's sessions end (shutdown): SSE answers end.
    shutdown: CancellationToken,
}

impl StatelessCalls {
    pub(crate) fn new(
        shared: Arc<Shared>,
        allowed_hosts: &[String],
        max_body_bytes: usize,
        keep_alive: Duration,
        shutdown: CancellationToken,
    ) -> Self {
        let server = WardenServer::new(shared.clone());
        let (ours, idle_end) = tokio::io::duplex(64);
        let idle = rmcp::service::serve_directly(server.clone(), tokio::io::split(ours), None);
        let peer = idle.peer().clone();
        let hosts = allowed_hosts.iter().filter_map(|h| allowed_authority(h)).collect();
        Self {
            shared,
            server,
            peer,
            _idle: idle,
            _idle_end: idle_end,
            hosts,
            max_body_bytes,
            keep_alive,
            shutdown,
        }
    }

    /// The answer to `request` if this path takes it, else `request` as it
    /// came (its body read into memory when that was needed to decide).
    pub(crate) async fn answer(&self, request: Request) -> Result<Response, Request> {
        if !self.takes_head(&request) {
            return Err(request);
        }
        let (parts, body) = request.into_parts();
        let bytes = match axum::body::to_bytes(body, self.max_body_bytes).await {
            Ok(bytes) => bytes,
            // What rmcp answers a body that fails to arrive.
            Err(error) => {
                let text = format!("Failed to read request body: {error}");
                return Ok((StatusCode::INTERNAL_SERVER_ERROR, text).into_response());
            }
        };
        let taken = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes)
            .ok()
            .filter(|message| self.takes(&parts.headers, message));
        let Some(ClientJsonRpcMessage::Request(mut request)) = taken else {
            return Err(Request::from_parts(parts, Body::from(bytes)));
        };
        // As rmcp's service loop builds a handler's context, but with its
        // notifications (progress, logs) sent here rather than to a peer.
        let id = request.id.clone();
        let mut context = RequestContext::new(request.id, self.peer.clone());
        context.meta = std::mem::take(request.request.get_meta_mut());
        context.extensions = std::mem::take(request.request.extensions_mut());
        context.extensions.insert(parts);
        let (sink, mut notifications) = NotificationSink::channel();
        context.extensions.insert(sink);
        let cancel = CancellationToken::new();
        context.ct = cancel.clone();
        let server = self.server.clone();
        let mut handler = FinishOnDrop::new(
            Box::pin(async move { Service::handle_request(&server, request.request, context).await }),
            cancel,
        );
        // rmcp's rule: a call whose first message is its answer gets one
        // JSON body; one that sends something first gets an SSE stream.
        let first = tokio::select! {
            biased;
            handled = &mut handler => {
                let answer = answer_message(handled, id);
                let mut queued = VecDeque::new();
                while let Ok(notification) = notifications.try_recv() {
                    queued.push_back(event(&ServerJsonRpcMessage::notification(notification)));
                }
                if queued.is_empty() {
                    return Ok(json_response(&answer));
                }
                queued.push_back(event(&answer));
                return Ok(self.stream(queued, notifications, None));
            }
            Some(notification) = notifications.recv() => notification,
        };
        let queued = VecDeque::from([event(&ServerJsonRpcMessage::notification(first))]);
        Ok(self.stream(queued, notifications, Some((handler, id))))
    }

    /// An SSE response, as rmcp's: the events so far, then the rest of the
    /// call's notifications and its answer as they come, with keep-alive
    /// comments between; it ends early when the server's sessions end.
    fn stream(
        &self,
        queued: VecDeque<Bytes>,
        notifications: mpsc::Receiver<ServerNotification>,
        running: Option<(FinishOnDrop, RequestId)>,
    ) -> Response {
        let body = StreamedCall {
            queued,
            notifications,
            running,
            keep_alive: (self.keep_alive, Box::pin(tokio::time::sleep(self.keep_alive))),
            shutdown: Box::pin(self.shutdown.clone().cancelled_owned()),
        };
        let mut response = Response::new(Body::new(body));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }

    /// The checks that need only the request's head.
    fn takes_head(&self, request: &Request) -> bool {
        let headers = request.headers();
        request.method() == Method::POST
            && request.uri().path() == "/mcp"
            && self.host_allowed(headers)
            // A browser's request: rmcp checks its origin.
            && !headers.contains_key(header::ORIGIN)
            && accepts_json_and_sse(headers)
            && is_json(headers)
            && headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
                .is_some_and(|length| length <= self.max_body_bytes)
            && single(headers, PROTOCOL_VERSION) == Some(ProtocolVersion::V_2026_07_28.as_str())
            && single(headers, METHOD) == Some("tools/call")
            && single(headers, NAME).is_some_and(|name| !name.starts_with(BASE64_MARK))
            && !headers.keys().any(|name| name.as_str().starts_with(PARAM_PREFIX))
    }

    /// The checks on the message: a `tools/call` on the 2026-07-28 wire
    /// with every `_meta` key it needs, agreeing with its headers, to a tool
    /// without `Mcp-Param-*` headers.
    fn takes(&self, headers: &HeaderMap, message: &ClientJsonRpcMessage) -> bool {
        let ClientJsonRpcMessage::Request(request) = message else {
            return false;
        };
        let ClientRequest::CallToolRequest(call) = &request.request else {
            return false;
        };
        let meta = request.request.get_meta();
        meta.protocol_version() == Some(ProtocolVersion::V_2026_07_28)
            && meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
            && single(headers, NAME) == Some(call.params.name.as_ref())
            && self.tool_has_no_param_headers(&call.params.name)
    }

    fn tool_has_no_param_headers(&self, name: &str) -> bool {
        let catalog = self.shared.catalog.snapshot();
        // An unknown tool has no schema to check headers against, in rmcp
        // either; the handler answers it.
        catalog.tool(name).is_none_or(|tool| !tool.decl().param_headers)
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(authority) =
            single(headers, header::HOST.as_str()).and_then(|host| axum::http::uri::Authority::try_from(host).ok())
        else {
            return false;
        };
        let host = normalise(authority.host());
        let port = authority.port_u16();
        self.hosts
            .iter()
            .any(|(allowed, allowed_port)| *allowed == host && allowed_port.is_none_or(|p| Some(p) == port))
    }
}

/// A header's one value, as text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then(|| first.to_str().ok()).flatten()
}

/// One `Accept` header listing both media types, with no parameters (no
/// weights to weigh), no quoting and nothing else to interpret.
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let Some(accept) = single(headers, header::ACCEPT.as_str()) else {
        return false;
    };
    if accept.contains([';', '"']) {
        return false;
    }
    let (mut json, mut sse) = (false, false);
    for essence in accept.split(',').map(str::trim) {
        json |= essence.eq_ignore_ascii_case(JSON);
        sse |= essence.eq_ignore_ascii_case(EVENT_STREAM);
    }
    json && sse
}

/// rmcp's own rule: the `Content-Type` essence is `application/json`.
fn is_json(headers: &HeaderMap) -> bool {
    single(headers, header::CONTENT_TYPE.as_str()).is_some_and(|value| {
        let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case(JSON)
    })
}

/// An allowed host as rmcp reads one: an authority, else a bare host.
fn allowed_authority(allowed: &str) -> Option<(String, Option<u16>)> {
    let allowed = allowed.trim();
    if allowed.is_empty() {
        return None;
    }
    Some(match axum::http::uri::Authority::try_from(allowed) {
        Ok(authority) => (normalise(authority.host()), authority.port_u16()),
        Err(_) => (normalise(allowed), None),
    })
}

fn normalise(host: &str) -> String {
    host.trim_matches('[').trim_matches(']').to_ascii_lowercase()
}

/// The handler's result as the message rmcp's service loop makes of it.
fn answer_message(handled: Result<ServerResult, rmcp::ErrorData>, id: RequestId) -> ServerJsonRpcMessage {
    match handled {
        Ok(result) => ServerJsonRpcMessage::response(result, id),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    }
}

/// One SSE event carrying `message` (which always serialises: it was made
/// from Rust values, not parsed).
fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let json = serde_json::to_string(message).unwrap_or_default();
    Bytes::from(format!("data: {json}\n\n"))
}

/// The SSE body of a call that sent something before its answer.
struct StreamedCall {
    queued: VecDeque<Bytes>,
    notifications: mpsc::Receiver<ServerNotification>,
    /// The call while it runs, and its request's id for the answer.
    running: Option<(FinishOnDrop, RequestId)>,
    keep_alive: (Duration, Pin<Box<tokio::time::Sleep>>),
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl http_body::Body for StreamedCall {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        // One message at a time from the call: what waits here is at most
        // the channel's backlog and the answer, however slowly the client
        // reads.
        if this.queued.is_empty()
            && let Some((handler, id)) = this.running.as_mut()
        {
            match this.notifications.poll_recv(cx) {
                Poll::Ready(Some(notification)) => this
                    .queued
                    .push_back(event(&ServerJsonRpcMessage::notification(notification))),
                _ => {
                    if let Poll::Ready(handled) = Pin::new(handler).poll(cx) {
                        let id = id.clone();
                        this.running = None;
                        // The forwarder ended before the handler did: all it
                        // sent is here, and comes before the answer.
                        while let Ok(notification) = this.notifications.try_recv() {
                            this.queued
                                .push_back(event(&ServerJsonRpcMessage::notification(notification)));
                        }
                        this.queued.push_back(event(&answer_message(handled, id)));
                    }
                }
            }
        }
        if let Some(next) = this.queued.pop_front() {
            let (every, timer) = &mut this.keep_alive;
            timer.as_mut().reset(tokio::time::Instant::now() + *every);
            return Poll::Ready(Some(Ok(Frame::data(next))));
        }
        if this.running.is_none() || this.shutdown.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        let (every, timer) = &mut this.keep_alive;
        if timer.as_mut().poll(cx).is_ready() {
            timer.as_mut().reset(tokio::time::Instant::now() + *every);
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b":\n\n")))));
        }
        Poll::Pending
    }
}

/// The answer as rmcp writes a terminal message on the 2026-07-28 wire:
/// one JSON body, with the HTTP status its error code maps to.
fn json_response(message: &ServerJsonRpcMessage) -> Response {
    let status = match message {
        ServerJsonRpcMessage::Error(error) => match error.error.code {
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
            ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        },
        _ => StatusCode::OK,
    };
    match serde_json::to_vec(message) {
        Ok(body) => (status, [(header::CONTENT_TYPE, HeaderValue::from_static(JSON))], body).into_response(),
        Err(error) => {
            let text = format!("serialize json response: {error}");
            (StatusCode::INTERNAL_SERVER_ERROR, text).into_response()
        }
    }
}

type Handled = Pin<Box<dyn Future<Output = Result<ServerResult, rmcp::ErrorData>> + Send>>;

/// A handler run on the connection's task. If the connection goes away
/// first (the future is dropped), the call is cancelled and finished on a
/// task of its own, as rmcp does: it still ends, and is still audited.
struct FinishOnDrop {
    handler: Option<Handled>,
    cancel: CancellationToken,
}

impl FinishOnDrop {
    fn new(handler: Handled, cancel: CancellationToken) -> Self {
        Self {
            handler: Some(handler),
            cancel,
        }
    }
}

impl Future for FinishOnDrop {
    type Output = Result<ServerResult, rmcp::ErrorData>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(handler) = self.handler.as_mut() else {
            return Poll::Pending;
        };
        // A panic in the handler becomes this request's error: polled again
        // (by `Drop`) a panicked future would panic once more.
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler.as_mut().poll(cx)));
        let output = match polled {
            Ok(Poll::Pending) => return Poll::Pending,
            Ok(Poll::Ready(output)) => output,
            Err(_) => Err(rmcp::ErrorData::internal_error(
                "Warden itself failed handling this request (a bug in Warden); the server goes on",
                None,
            )),
        };
        self.handler = None;
        Poll::Ready(output)
    }
}

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        if let Some(handler) = self.handler.take() {
            self.cancel.cancel();
            // Outside a runtime (it is shutting down) the call just ends.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = handler.await;
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_handler_that_panics_answers_an_error_and_is_not_polled_again() {
        let handler: Handled = Box::pin(async {
            if std::hint::black_box(true) {
                panic!("a bug in the handler");
            }
            Err(rmcp::ErrorData::internal_error("not reached", None))
        });
        let cancel = CancellationToken::new();
        let answered = FinishOnDrop::new(handler, cancel.clone()).await;
        let error = answered.expect_err("a panic is an error answer");
        assert!(error.message.contains("Warden itself failed"), "{}", error.message);
        // Finished: dropping it spawns nothing that would poll the panicked future.
        assert!(!cancel.is_cancelled());
    }
}
