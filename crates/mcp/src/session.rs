//! What one connection (a 2025-11-25 session, or one stdio peer) asked the
//! server to remember: its log level and its resource subscriptions.
//! A 2026-07-28 request carries these itself and needs none of it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::logging::Level;
use crate::principal::Principal;

/// Who subscribed (in OAuth mode): each update is checked against what the
/// policy grants them when it is sent.
pub type Subscriber = Option<Arc<Principal>>;

#[derive(Default)]
pub struct Session {
    log_level: Mutex<Option<Level>>,
    subscriptions: Mutex<BTreeMap<String, Subscriber>>,
    /// Cancelled when the session's last handler is dropped (the session
    /// ended): its notification task ends with it.
    closed: CancellationToken,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl Session {
    /// The level set by `logging/setLevel`; `None` until the client sets one,
    /// and then plugin logs are not sent to it.
    pub fn log_level(&self) -> Option<Level> {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_log_level(&self, level: Level) {
        *self.log_level.lock().unwrap_or_else(|p| p.into_inner()) = Some(level);
    }

    /// Adds `uri` unless the session already holds `limit` other
    /// subscriptions; false when it is full.
    pub fn subscribe(&self, uri: String, subscriber: Subscriber, limit: usize) -> bool {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner());
        if subscriptions.len() >= limit && !subscriptions.contains_key(&uri) {
            return false;
        }
        subscriptions.insert(uri, subscriber);
        true
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
    }

    pub fn subscriptions(&self) -> Vec<(String, Subscriber)> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(uri, subscriber)| (uri.clone(), subscriber.clone()))
            .collect()
    }

    /// Cancelled once this session has ended.
    pub fn closed(&self) -> CancellationToken {
        self.closed.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscriptions_stop_at_the_limit_but_resubscribing_is_fine() {
        let session = Session::default();
        assert!(session.subscribe("a://1".into(), None, 2));
        assert!(session.subscribe("a://2".into(), None, 2));
        assert!(!session.subscribe("a://3".into(), None, 2));
        assert!(session.subscribe("a://2".into(), None, 2), "already held");
        session.unsubscribe("a://1");
        assert!(session.subscribe("a://3".into(), None, 2));
        let uris: Vec<_> = session.subscriptions().into_iter().map(|(uri, _)| uri).collect();
        assert_eq!(uris, ["a://2", "a://3"]);
    }

    #[test]
    fn dropping_the_session_closes_it() {
        let session = Session::default();
        let closed = session.closed();
        assert!(!closed.is_cancelled());
        drop(session);
        assert!(closed.is_cancelled());
    }
}
