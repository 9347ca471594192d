//! A `requestState` is accepted once. This process remembers a digest of
//! every state it accepted until that state has expired anyway, in a set with
//! a hard cap; a state seen before is refused. At the cap (a flood of
//! interactive calls within one state lifetime) it fails closed: a retry it
//! could not remember is refused, until older entries expire.
//!
//! Replicas that share a task store (`--task-store redis://…`) also record
//! each state there (`SharedUses`), so a state is accepted once across all
//! of them; without one, a state can be used once on each replica sharing a
//! `--state-key-file` (docs/security.md).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;

use sha2::{Digest, Sha256};

/// The most states remembered at once: 32 bytes of digest and 16 of expiry,
/// twice (set and queue), about 8 MiB at the cap.
pub const MAX_USED_STATES: usize = 65_536;

/// Why a state cannot be used now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// It was accepted before.
    Replayed,
    /// The set is full of states that have not expired yet.
    Full,
}

pub struct UsedStates {
    inner: Mutex<Inner>,
    cap: usize,
    ttl: Duration,
    shared: OnceLock<Arc<dyn SharedUses>>,
}

/// A record of used states every replica shares.
pub trait SharedUses: Send + Sync {
    /// Records `digest` as used for `ttl`; false if it was used before.
    fn use_once<'a>(
        &'a self,
        digest: [u8; 32],
        ttl: Duration,
    ) -> Pin<Box<dyn Future<Output = anyhow::Result<bool>> + Send + 'a>>;
}

#[derive(Default)]
struct Inner {
    seen: HashSet<[u8; 32]>,
    /// In the order they were accepted, which is the order they expire in.
    expiry: VecDeque<(Instant, [u8; 32])>,
}

impl UsedStates {
    /// Remembers each state for `ttl` (the state's own lifetime), at most `cap` at once.
    pub fn new(ttl: Duration, cap: usize) -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            cap,
            ttl,
            shared: OnceLock::new(),
        }
    }

    /// From now on, states are also recorded in `shared`.
    pub fn share_with(&self, shared: Arc<dyn SharedUses>) {
        let _ = self.shared.set(shared);
    }

    /// Records `sealed` in the shared record, when there is one: refused if
    /// another replica accepted it already, or (failing closed) if the
    /// record cannot be reached.
    pub async fn use_shared(&self, sealed: &str) -> Result<(), McpError> {
        let Some(shared) = self.shared.get() else { return Ok(()) };
        let digest: [u8; 32] = Sha256::digest(sealed.as_bytes()).into();
        match shared.use_once(digest, self.ttl).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(McpError::invalid_params(
                "requestState has been used already (on another replica): each one continues a call once; call again without it",
                None,
            )),
            Err(error) => {
                tracing::error!("cannot record a used requestState in the task store: {error:#}");
                Err(McpError::internal_error(
                    "the shared record of used request states is unavailable; try again",
                    None,
                ))
            }
        }
    }

    /// Records `sealed` as used; refused if it was used before or nothing more can be remembered.
    pub fn use_once(&self, sealed: &str) -> Result<(), Refused> {
        let digest: [u8; 32] = Sha256::digest(sealed.as_bytes()).into();
        let now = Instant::now();
        let mut inner = self.inner.lock().expect("used states lock");
        while inner.expiry.front().is_some_and(|(until, _)| *until <= now) {
            if let Some((_, old)) = inner.expiry.pop_front() {
                inner.seen.remove(&old);
            }
        }
        if inner.seen.contains(&digest) {
            return Err(Refused::Replayed);
        }
        if inner.seen.len() >= self.cap {
            return Err(Refused::Full);
        }
        inner.seen.insert(digest);
        inner.expiry.push_back((now + self.ttl, digest));
        Ok(())
    }

    /// States remembered now.
    pub fn len(&self) -> usize {
        self.inner.lock().expect("used states lock").seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for UsedStates {
    fn default() -> Self {
        Self::new(super::STATE_TTL, MAX_USED_STATES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_accepted_once_and_forgotten_when_it_expires() {
        let used = UsedStates::new(Duration::from_millis(50), 8);
        assert_eq!(used.use_once("a"), Ok(()));
        assert_eq!(used.use_once("a"), Err(Refused::Replayed));
        assert_eq!(used.use_once("b"), Ok(()));
        std::thread::sleep(Duration::from_millis(80));
        // Expired: the codec refuses the state itself by now; the entry is gone.
        assert_eq!(used.use_once("c"), Ok(()));
        assert_eq!(used.len(), 1);
    }

    #[test]
    fn at_the_cap_it_fails_closed() {
        let used = UsedStates::new(Duration::from_secs(60), 3);
        for state in ["a", "b", "c"] {
            assert_eq!(used.use_once(state), Ok(()));
        }
        assert_eq!(used.use_once("d"), Err(Refused::Full));
        assert_eq!(used.use_once("a"), Err(Refused::Replayed));
        assert_eq!(used.len(), 3, "nothing was evicted to make room");
        // Not remembered, so refused again rather than accepted later unrecorded.
        assert_eq!(used.use_once("d"), Err(Refused::Full));
    }
}
