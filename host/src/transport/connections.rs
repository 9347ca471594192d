//! Accepting HTTP connections, and bounding what each may cost: how many
//! are open at once, and how long one may sit without sending a complete
//! request (hyper enforces nothing of the kind unless given a timer), and
//! how long it may leave what it is sent unread.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
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

/// Serves `router` on every connection `listener` accepts until `stop` is
/// cancelled; then stops accepting, lets each connection finish the response
/// it is writing, and returns once all are closed.
pub async fn serve(listener: TcpListener, router: Router, limits: ConnectionLimits, stop: CancellationToken) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
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
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let stream = WriteDeadline::new(stream, limits.write_timeout);
        let connection = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                let cause = std::error::Error::source(&error)
                    .map(|cause| format!(": {cause}"))
                    .unwrap_or_default();
                tracing::debug!("HTTP connection closed: {error}{cause}");
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
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
