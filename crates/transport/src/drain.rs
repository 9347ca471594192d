//! Draining on shutdown without losing a request that reached Warden.
//!
//! When shutdown begins the listener closes at once (a proxy's next connect
//! is refused, and it tries another replica: nothing was sent), while every
//! request already on an accepted connection is served. The server waits
//! until no request is being admitted and no call is running — twice, a
//! moment apart, so a call between the two (its response head is out, its
//! handler not yet entered) is not cut off — before ending sessions and
//! streams.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use warden_mcp::InFlight;

/// Requests being handled whose response head is not out yet.
#[derive(Default)]
pub struct Requests {
    count: AtomicUsize,
}

struct Admitted<'a>(&'a AtomicUsize);

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Requests {
    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

/// Counts the request while its response head is being produced.
pub async fn track(State(requests): State<Arc<Requests>>, request: Request, next: Next) -> Response {
    requests.count.fetch_add(1, Ordering::SeqCst);
    let _admitted = Admitted(&requests.count);
    next.run(request).await
}

/// How often the counts are looked at while draining.
const POLL: Duration = Duration::from_millis(10);

/// Resolves once no request is being admitted and no call runs, seen twice
/// `settle` apart; false when `grace` ran out first.
pub async fn quiet(grace: Duration, settle: Duration, in_flight: &InFlight, requests: &Requests) -> bool {
    let idle = || in_flight.count() == 0 && requests.count() == 0;
    tokio::time::timeout(grace, async {
        loop {
            if idle() {
                tokio::time::sleep(settle).await;
                if idle() {
                    return;
                }
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await
    .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn quiet_waits_for_calls_and_requests() {
        let in_flight = InFlight::default();
        let requests = Requests::default();
        let settle = Duration::from_millis(50);
        assert!(quiet(Duration::from_secs(1), settle, &in_flight, &requests).await);

        let call = in_flight.enter();
        let released = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            drop(call);
        });
        let started = tokio::time::Instant::now();
        assert!(quiet(Duration::from_secs(5), settle, &in_flight, &requests).await);
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
        released.await.unwrap();

        requests.count.fetch_add(1, Ordering::SeqCst);
        assert!(
            !quiet(Duration::from_millis(300), settle, &in_flight, &requests).await,
            "a request being admitted holds the drain until the grace runs out"
        );
    }
}
