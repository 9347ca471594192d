//! Counts tool calls in progress, so a graceful shutdown can wait for them
//! (and `/metrics` can tell how many sandbox instances are in use).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

#[derive(Clone, Default)]
pub struct InFlight {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    count: AtomicUsize,
    idle: Notify,
}

/// Held for the duration of one call.
pub struct CallGuard(Arc<Inner>);

impl InFlight {
    pub fn enter(&self) -> CallGuard {
        self.inner.count.fetch_add(1, Ordering::SeqCst);
        if let Some(metrics) = warden_runtime::metrics::get() {
            metrics.instance_started();
        }
        CallGuard(self.inner.clone())
    }

    pub fn count(&self) -> usize {
        self.inner.count.load(Ordering::SeqCst)
    }

    /// Resolves once no call is running.
    pub async fn idle(&self) {
        loop {
            let notified = self.inner.idle.notified();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Some(metrics) = warden_runtime::metrics::get() {
            metrics.instance_ended();
        }
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_call() {
        let in_flight = InFlight::default();
        in_flight.idle().await;
        let first = in_flight.enter();
        let second = in_flight.enter();
        let waiter = tokio::spawn({
            let in_flight = in_flight.clone();
            async move { in_flight.idle().await }
        });
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        drop(second);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
    }
}
