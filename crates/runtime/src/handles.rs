//! The process-wide budget of OS handles that plugin calls may hold.
//!
//! A call's WASI resource table holds at most `[limits] handles` entries, and
//! an entry pins at most one OS file descriptor (an open file or directory,
//! a socket, an outgoing HTTP connection). A call reserves that many permits
//! from this budget before it starts, so however many calls run at once, the
//! descriptors they can hold never exceed the budget — and the HTTP listener,
//! the pinned mounts and the compiled-code cache always have the rest.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Descriptors kept for everything that is not a plugin call: listeners,
/// client connections, pinned mounts, the watcher, cache mappings, logs.
const MIN_RESERVED: u64 = 256;
const MAX_RESERVED: u64 = 8192;

pub struct HandleBudget {
    /// Shared: a sandbox instantiated ahead of its call holds its permits
    /// while it waits (see `spare.rs`).
    permits: Arc<Semaphore>,
    total: u32,
}

impl HandleBudget {
    /// A budget sized from the process's descriptor limit, which is first
    /// raised to its hard maximum (the usual practice for servers: the soft
    /// limit is often 1024 for historical reasons).
    pub fn from_process_limit() -> Self {
        let limit = raise_descriptor_limit();
        let budget = budget_for(limit);
        tracing::debug!(descriptor_limit = limit, plugin_budget = budget, "OS handle budget");
        Self::new(budget)
    }

    pub fn new(total: u32) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(total as usize)),
            total,
        }
    }

    pub fn total(&self) -> u32 {
        self.total
    }

    /// Reserves `handles` permits (at most the whole budget), waiting for
    /// them if other calls hold them.
    pub async fn reserve(&self, handles: u32) -> OwnedSemaphorePermit {
        self.permits
            .clone()
            .acquire_many_owned(handles.min(self.total))
            .await
            .expect("the handle budget is never closed")
    }

    pub fn try_reserve(&self, handles: u32) -> Option<OwnedSemaphorePermit> {
        self.permits
            .clone()
            .try_acquire_many_owned(handles.min(self.total))
            .ok()
    }
}

/// What plugin calls may hold together, out of a descriptor limit.
fn budget_for(limit: u64) -> u32 {
    let reserved = (limit / 4).clamp(MIN_RESERVED, MAX_RESERVED);
    // A limit too small to reserve anything still lets one call run with a
    // few handles; such a machine is misconfigured, and said so below.
    let budget = limit.saturating_sub(reserved).max(crate::manifest::MIN_HANDLES as u64);
    u32::try_from(budget).unwrap_or(u32::MAX)
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the limit
/// now in force.
fn raise_descriptor_limit() -> u64 {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit only read and write the struct passed.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return 1024;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit = raised;
                }
            }
        }
        let current = limit.rlim_cur;
        if current < 2 * MIN_RESERVED {
            tracing::warn!(
                "the process may open only {current} files; plugin calls will wait for each other's handles. \
                 Raise the limit (ulimit -n) for Warden"
            );
        }
        current
    }
    #[cfg(not(unix))]
    {
        1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_descriptors_for_the_server() {
        assert_eq!(budget_for(20_000), 15_000);
        assert_eq!(budget_for(1 << 20), (1 << 20) - 8192);
        assert_eq!(budget_for(1024), 768);
        assert_eq!(budget_for(300), 44);
        assert_eq!(budget_for(10), crate::manifest::MIN_HANDLES);
    }

    #[tokio::test]
    async fn reservations_larger_than_the_budget_take_all_of_it() {
        let budget = HandleBudget::new(100);
        let all = budget.reserve(4096).await;
        assert!(budget.try_reserve(1).is_none());
        drop(all);
        let some = budget.try_reserve(60).unwrap();
        assert!(budget.try_reserve(60).is_none());
        assert!(budget.try_reserve(40).is_some());
        drop(some);
    }
}
