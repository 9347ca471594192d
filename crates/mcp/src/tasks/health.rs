//! Whether this replica may judge a task's lease: a lease that ran out while
//! the store could not be reached (down, stalled, cut off) says nothing about
//! the runner, which could not renew it either. A lease counts as run out
//! only once this replica has reached the store without trouble for a whole
//! `LEASE` — time enough for a live runner, which retries at every
//! heartbeat, to have renewed it.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::LEASE;
use super::record::now_ms;

/// A store call slower than this counts as trouble: a stalled store
/// answers late rather than not at all.
pub const SLOW_CALL: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct StoreHealth {
    /// When a call last failed or was slow (ms since the epoch; 0: never).
    troubled_ms: AtomicU64,
}

impl StoreHealth {
    /// Runs a store call, noting whether it went badly (`failed` says
    /// which results count as the store's failure).
    pub async fn noted<T>(&self, call: impl Future<Output = T>, failed: impl Fn(&T) -> bool) -> T {
        let started = Instant::now();
        let result = call.await;
        if failed(&result) || started.elapsed() >= SLOW_CALL {
            self.troubled_ms.fetch_max(now_ms(), Ordering::SeqCst);
        }
        result
    }

    /// Whether a lease that ran out by `now` means its runner stopped.
    pub fn judges_leases(&self, now: u64) -> bool {
        now >= self.troubled_ms.load(Ordering::SeqCst) + LEASE.as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn trouble_suspends_judging_leases_for_a_whole_lease() {
        let health = StoreHealth::default();
        assert!(health.judges_leases(now_ms()));
        let ok: Result<(), ()> = health.noted(async { Ok(()) }, Result::is_err).await;
        assert!(ok.is_ok() && health.judges_leases(now_ms()));
        let _ = health.noted(async { Err::<(), ()>(()) }, Result::is_err).await;
        let now = now_ms();
        assert!(!health.judges_leases(now));
        assert!(!health.judges_leases(now + LEASE.as_millis() as u64 - 100));
        assert!(health.judges_leases(now + LEASE.as_millis() as u64 + 100));
    }
}
