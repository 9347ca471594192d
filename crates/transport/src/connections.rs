//! Accepting HTTP connections, and bounding what each may cost: how many
//! are open at once, and how long one may sit without sending a complete
//! request (hyper enforces nothing of the kind unless given a timer), and
//! how long it may leave what it is sent unread.
//!
//! At the cap, a new connection is not refused while some open one has no
//! request in progress: the oldest of those is shed (closed) to make room,
//! preferring one that never sent a complete request head. A flood of idle
//! or half-sent connections then only pushes out its own, and a client that
//! sends its request at once is served. A connection with a request in
//! progress — an SSE stream included — is never shed; only when every one
//! has is a new connection refused.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http_body::Frame;
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
    /// Connections open at once. Past it, the oldest connection with no
    /// request in progress is shed; when every one has a request in
    /// progress, the new one is answered 503 and closed at once.
    pub max_connections: usize,
    /// Connections one peer address may hold (0: no limit of its own). Past
    /// it, the peer's own oldest connection with no request in progress is
    /// shed, else the new one is refused: one peer cannot push out others.
    pub max_connections_per_peer: usize,
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
    // Sockets held, counting the shed ones not closed yet: the hard bound.
    let held = limits.max_connections + SHED_HEADROOM;
    let sockets = Arc::new(Semaphore::new(held));
    let admitted = Arc::new(Admitted::new(limits.max_connections, limits.max_connections_per_peer));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let accept = async |stream: TcpStream, peer: IpAddr| {
        // Only sockets just shed and not closed yet can be missing: wait
        // the moment their tasks take (this holds the accept loop back, so
        // the kernel's queue, not Warden, keeps what arrives meanwhile).
        let Ok(Ok(socket)) = tokio::time::timeout(SHED_WAIT, sockets.clone().acquire_owned()).await else {
            refuse(stream);
            return;
        };
        let Some(place) = Admitted::admit(&admitted, peer) else {
            refuse(stream);
            return;
        };
        tokio::spawn(serve_connection(
            stream,
            builder.clone(),
            router.clone(),
            limits,
            stop.clone(),
            (place, socket),
        ));
    };
    let mut accept_failing = false;
    loop {
        let (stream, peer) = tokio::select! {
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
        accept(stream, peer.ip()).await;
    }
    let queued = queued_connections(listener);
    tracing::debug!(
        "listener closed; {} queued connections accepted while stopping",
        queued.len()
    );
    for (stream, peer) in queued {
        accept(stream, peer).await;
    }
    // Every connection holds a socket permit until it is closed.
    let all = u32::try_from(held).unwrap_or(u32::MAX);
    let _ = sockets.acquire_many(all).await;
}

/// Sockets that may be open beyond `max_connections`: connections just shed
/// whose tasks have not closed them yet (a moment each). Past it, the
/// accept loop waits (up to `SHED_WAIT`) until they have.
const SHED_HEADROOM: usize = 64;

/// How long a new connection waits for a shed socket to close before it is
/// refused instead.
const SHED_WAIT: Duration = Duration::from_secs(1);

/// The connections holding a place under `max_connections`, in the order
/// they were accepted, and what each is doing: what to shed at the cap.
struct Admitted {
    max: usize,
    /// 0: no cap per peer.
    max_per_peer: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    open: BTreeMap<u64, Entry>,
    /// How many of `open` each peer holds (peers holding none are removed).
    per_peer: HashMap<IpAddr, usize>,
}

impl Table {
    fn insert(&mut self, id: u64, entry: Entry) {
        *self.per_peer.entry(entry.peer).or_default() += 1;
        self.open.insert(id, entry);
    }

    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.open.remove(&id)?;
        if let Some(held) = self.per_peer.get_mut(&entry.peer) {
            *held -= 1;
            if *held == 0 {
                self.per_peer.remove(&entry.peer);
            }
        }
        Some(entry)
    }

    /// The connection to shed among those `eligible`: the oldest with no
    /// request in progress, one that never sent a complete head first.
    fn victim(&self, eligible: impl Fn(&Entry) -> bool) -> Option<u64> {
        self.open
            .iter()
            .filter(|(_, entry)| entry.requests == 0 && eligible(entry))
            .min_by_key(|(id, entry)| (entry.headed, **id))
            .map(|(id, _)| *id)
    }
}

struct Entry {
    peer: IpAddr,
    /// Requests in progress: from a complete head until the response
    /// (stream) is finished or dropped.
    requests: usize,
    /// Whether it has sent a complete request head yet.
    headed: bool,
    shed: CancellationToken,
}

impl Admitted {
    fn new(max: usize, max_per_peer: usize) -> Self {
        Self {
            max,
            max_per_peer,
            table: Mutex::default(),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a new connection from `peer`. When `peer` holds its own
    /// cap, one of its connections without a request in progress is shed
    /// (the oldest, one that never sent a head first); else, when the server
    /// holds `max`, any one is. `None` when there is none to shed.
    fn admit(this: &Arc<Self>, peer: IpAddr) -> Option<Place> {
        let mut table = this.table();
        let peer_full = this.max_per_peer > 0 && table.per_peer.get(&peer).copied().unwrap_or(0) >= this.max_per_peer;
        let victim = if peer_full {
            Some(table.victim(|entry| entry.peer == peer)?)
        } else if table.open.len() >= this.max {
            Some(table.victim(|_| true)?)
        } else {
            None
        };
        if let Some(entry) = victim.and_then(|id| table.remove(id)) {
            tracing::debug!(
                "shed an idle connection ({}) to admit a new one ({})",
                if entry.headed {
                    "between requests"
                } else {
                    "no complete request head"
                },
                if peer_full {
                    "its peer's cap"
                } else {
                    "the server's cap"
                }
            );
            entry.shed.cancel();
        }
        let id = table.next_id;
        table.next_id += 1;
        let shed = CancellationToken::new();
        table.insert(
            id,
            Entry {
                peer,
                requests: 0,
                headed: false,
                shed: shed.clone(),
            },
        );
        Some(Place {
            admitted: this.clone(),
            id,
            shed,
        })
    }
}

/// A connection's place under the cap; given up when it closes.
struct Place {
    admitted: Arc<Admitted>,
    id: u64,
    /// Cancelled when the connection is shed.
    shed: CancellationToken,
}

impl Place {
    /// Marks a request in progress until the returned guard is dropped.
    fn request(&self) -> InRequest {
        if let Some(entry) = self.admitted.table().open.get_mut(&self.id) {
            entry.requests += 1;
            entry.headed = true;
        }
        InRequest {
            admitted: self.admitted.clone(),
            id: self.id,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.admitted.table().remove(self.id);
    }
}

/// One request in progress on a connection: held by its response body.
struct InRequest {
    admitted: Arc<Admitted>,
    id: u64,
}

impl Drop for InRequest {
    fn drop(&mut self) {
        if let Some(entry) = self.admitted.table().open.get_mut(&self.id) {
            entry.requests = entry.requests.saturating_sub(1);
        }
    }
}

/// A response body that keeps its request in progress until it is finished
/// or dropped (an SSE stream: while it is open).
struct InRequestBody {
    inner: Body,
    _request: InRequest,
}

impl http_body::Body for InRequestBody {
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

/// Takes every connection waiting in the kernel's accept queue, then closes
/// the listener. The queue is read with the accept call itself: the
/// reactor's readiness may not know yet of the last connections, and
/// closing a listener resets the connections still queued.
fn queued_connections(listener: TcpListener) -> Vec<(TcpStream, IpAddr)> {
    let mut queued = Vec::new();
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            tracing::warn!("cannot take the connections queued at shutdown: {error}");
            return queued;
        }
    };
    // Still non-blocking: `accept` fails with WouldBlock once the queue is empty.
    while let Ok((stream, peer)) = listener.accept() {
        match stream.set_nonblocking(true).and_then(|()| TcpStream::from_std(stream)) {
            Ok(stream) => queued.push((stream, peer.ip())),
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
    (place, socket): (Place, OwnedSemaphorePermit),
) {
    let accepted = Instant::now();
    let _ = stream.set_nodelay(true);
    let stream = WriteDeadline::new(stream, limits.write_timeout);
    let place = Arc::new(place);
    let shed = place.shed.clone();
    let service = {
        let place = place.clone();
        let router = TowerToHyperService::new(router);
        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            // hyper calls this once the request head is complete.
            let request_in_progress = place.request();
            let answer = hyper::service::Service::call(&router, request);
            async move {
                let response = answer.await?;
                Ok::<_, std::convert::Infallible>(response.map(|inner| {
                    Body::new(InRequestBody {
                        inner,
                        _request: request_in_progress,
                    })
                }))
            }
        })
    };
    let mut connection = Box::pin(builder.serve_connection(TokioIo::new(stream), service));
    let finish = async {
        stop.cancelled().await;
        tokio::time::sleep_until(accepted + FIRST_REQUEST_GRACE).await;
    };
    let result = tokio::select! {
        result = connection.as_mut() => result,
        // Shed at the cap, with no request in progress: dropping the
        // connection closes it.
        () = shed.cancelled() => Ok(()),
        () = finish => {
            connection.as_mut().graceful_shutdown();
            connection.as_mut().await
        }
    };
    if let Err(error) = result {
        let cause = std::error::Error::source(&error)
            .map(|cause| format!(": {cause}"))
            .unwrap_or_default();
        tracing::debug!("HTTP connection closed: {error}{cause}");
    }
    // The socket is closed before its permit is given back.
    drop(connection);
    drop(place);
    drop(socket);
}

/// Answers a connection past the cap (every open one has a request in
/// progress) without reading from it. The write
/// never waits: a client that cannot take 200 bytes at once gets nothing.
fn refuse(stream: TcpStream) {
    tracing::debug!("refused a connection: too many open");
    let _ = stream.try_write(REFUSED);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const PEER: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

    #[test]
    fn at_the_cap_the_oldest_idle_connection_is_shed_never_one_with_a_request_in_progress() {
        let admitted = Arc::new(Admitted::new(3, 0));
        let first = Admitted::admit(&admitted, PEER).unwrap();
        let second = Admitted::admit(&admitted, PEER).unwrap();
        let third = Admitted::admit(&admitted, PEER).unwrap();
        // The first has a request in progress (an SSE stream, say); the
        // second served a request and is idle between requests; the third
        // never sent a complete head.
        let streaming = first.request();
        drop(second.request());
        let fourth = Admitted::admit(&admitted, PEER).unwrap();
        assert!(third.shed.is_cancelled(), "the one that never sent a head goes first");
        assert!(!first.shed.is_cancelled() && !second.shed.is_cancelled());
        let fifth = Admitted::admit(&admitted, PEER).unwrap();
        assert!(fourth.shed.is_cancelled(), "then the oldest other one without a head");
        let fifth_busy = fifth.request();
        let sixth = Admitted::admit(&admitted, PEER).unwrap();
        assert!(second.shed.is_cancelled(), "then one idle between requests");
        assert!(!first.shed.is_cancelled(), "a request in progress is never shed");
        assert_eq!(admitted.table().open.len(), 3);

        // Every place has a request in progress: a new connection is refused.
        let sixth_busy = sixth.request();
        assert!(Admitted::admit(&admitted, PEER).is_none());
        drop(streaming);
        let _seventh = Admitted::admit(&admitted, PEER).expect("a finished stream leaves its connection sheddable");
        assert!(first.shed.is_cancelled());
        drop((first, second, third, fourth, fifth_busy, sixth_busy));
        assert_eq!(
            admitted.table().open.len(),
            3,
            "places of shed connections are not counted twice"
        );
        assert_eq!(admitted.table().per_peer[&PEER], 3);
    }

    #[test]
    fn a_peer_at_its_own_cap_sheds_only_its_own_connections() {
        let other = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let admitted = Arc::new(Admitted::new(10, 2));
        // The other peer's connection, idle between requests: the oldest.
        let kept = Admitted::admit(&admitted, other).unwrap();
        drop(kept.request());
        let first = Admitted::admit(&admitted, PEER).unwrap();
        let second = Admitted::admit(&admitted, PEER).unwrap();
        drop(first.request());
        drop(second.request());
        // PEER holds its 2: its third sheds its own oldest, never `kept`.
        let third = Admitted::admit(&admitted, PEER).unwrap();
        assert!(first.shed.is_cancelled());
        assert!(!kept.shed.is_cancelled());
        assert_eq!(admitted.table().per_peer[&PEER], 2);
        // Both of PEER's places busy: PEER is refused, the other peer is not.
        let busy = (second.request(), third.request());
        assert!(Admitted::admit(&admitted, PEER).is_none());
        assert!(Admitted::admit(&admitted, other).is_some());
        assert!(!kept.shed.is_cancelled());
        drop((first, second, third, busy));
        assert_eq!(
            admitted.table().per_peer.get(&PEER),
            None,
            "a peer holding nothing is forgotten"
        );
    }

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
