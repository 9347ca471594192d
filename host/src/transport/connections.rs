//! Accepting HTTP connections, and bounding what each may cost: how many
//! are open at once, and how long one may sit without sending a complete
//! request (hyper enforces nothing of the kind unless given a timer), and
//! how long it may leave what it is sent unread.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::write_deadline::WriteDeadline;

#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once; more are answered 503 and closed at once.
    pub max_connections: usize,
    /// How long a connection with no request in progress (new, or between
    /// requests) may take to deliver a complete request head. This is also
    /// the idle timeout: an open response stream is a request in progress.
    pub header_timeout: Duration,
    /// How long a write may stay blocked (the client reads nothing) before
    /// the connection is closed.
    pub write_timeout: Duration,
}

/// What a connection past the cap gets before it is closed: nothing of its
/// request is read.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: text/plain\r\n\
retry-after: 1\r\n\
connection: close\r\n\
content-length: 40\r\n\
\r\n\
too many open connections; retry later\r\n";

/// After a failed accept (out of file descriptors, say), wait this long
/// before the next: retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How long a connection accepted just before shutdown has to send its
/// first request before it is closed: a proxy writes its request right
/// after connecting, and closing the connection under it would lose the
/// request (a proxy does not resend a POST it has sent).
const FIRST_REQUEST_GRACE: Duration = Duration::from_secs(1);

/// Serves `router` on every connection `listener` accepts until `stop` is
/// cancelled. Then it accepts the connections already waiting in the
/// kernel's queue (refusing them would lose requests already sent on them),
/// closes the listener, so new connections are refused, and tells each
/// connection to close after the response it is writing (an idle one
/// closes at once, one younger than `FIRST_REQUEST_GRACE` once it is that
/// old). Returns once all are closed.
pub async fn serve(listener: TcpListener, router: Router, limits: ConnectionLimits, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let accept = |stream: TcpStream| {
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(stream);
            return;
        };
        tokio::spawn(serve_connection(
            stream,
            builder.clone(),
            router.clone(),
            limits,
            stop.clone(),
            slot,
        ));
    };
    let mut accept_failing = false;
    loop {
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => {
                    accept_failing = false;
                    accepted
                }
                Err(error) => {
                    if !accept_failing {
                        tracing::warn!("cannot accept a connection: {error}");
                        accept_failing = true;
                    }
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        accept(stream);
    }
    let queued = queued_connections(listener);
    tracing::debug!(
        "listener closed; {} queued connections accepted while stopping",
        queued.len()
    );
    for stream in queued {
        accept(stream);
    }
    // Every connection holds a slot until it is closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
}

/// Takes every connection waiting in the kernel's accept queue, then closes
/// the listener. The queue is read with the accept call itself: the
/// reactor's readiness may not know yet of the last connections, and
/// closing a listener resets the connections still queued.
fn queued_connections(listener: TcpListener) -> Vec<TcpStream> {
    let mut queued = Vec::new();
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            tracing::warn!("cannot take the connections queued at shutdown: {error}");
            return queued;
        }
    };
    // Still non-blocking: `accept` fails with WouldBlock once the queue is empty.
    while let Ok((stream, _)) = listener.accept() {
        match stream.set_nonblocking(true).and_then(|()| TcpStream::from_std(stream)) {
            Ok(stream) => queued.push(stream),
            Err(error) => tracing::debug!("dropped a connection queued at shutdown: {error}"),
        }
    }
    queued
}

async fn serve_connection(
    stream: TcpStream,
    builder: http1::Builder,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
    slot: OwnedSemaphorePermit,
) {
    let accepted = Instant::now();
    let _ = stream.set_nodelay(true);
    let stream = WriteDeadline::new(stream, limits.write_timeout);
    let connection = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router));
    tokio::pin!(connection);
    let finish = async {
        stop.cancelled().await;
        tokio::time::sleep_until(accepted + FIRST_REQUEST_GRACE).await;
    };
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = finish => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = result {
        let cause = std::error::Error::source(&error)
            .map(|cause| format!(": {cause}"))
            .unwrap_or_default();
        tracing::debug!("HTTP connection closed: {error}{cause}");
    }
    drop(slot);
}

/// Answers a connection past the cap without reading from it. The write
/// never waits: a client that cannot take 200 bytes at once gets nothing.
fn refuse(stream: TcpStream) {
    tracing::debug!("refused a connection: too many open");
    let _ = stream.try_write(REFUSED);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_well_formed_response() {
        let text = std::str::from_utf8(REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(body.len(), length);
    }
}
