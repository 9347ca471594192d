//! What one connection (a 2025-11-25 session, or one stdio peer) asked the
//! server to remember: its log level and its resource subscriptions.
//! A 2026-07-28 request carries these itself and needs none of it.

use std::collections::BTreeSet;
use std::sync::Mutex;

use super::logging::Level;

#[derive(Default)]
pub struct Session {
    log_level: Mutex<Option<Level>>,
    subscriptions: Mutex<BTreeSet<String>>,
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

    pub fn subscribe(&self, uri: String) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).insert(uri);
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri);
    }

    pub fn subscriptions(&self) -> Vec<String> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}
