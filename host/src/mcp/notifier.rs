//! Telling connected clients that a list they may have cached changed.
//!
//! Two ways in, one per protocol era: a 2025-11-25 session (`initialize`
//! handshake) gets `notifications/*/list_changed` through its peer; a
//! 2026-07-28 client asks for them on a `subscriptions/listen` stream, which
//! the handler serves from `subscribe()`.

use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::service::Peer;
use tokio::sync::broadcast;

/// Which lists changed (or, for `Notifier::supported`, which lists can).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListChanges {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
}

impl ListChanges {
    pub const NONE: Self = Self {
        tools: false,
        resources: false,
        prompts: false,
    };

    pub fn any(&self) -> bool {
        self.tools || self.resources || self.prompts
    }

    /// Only what `supported` allows.
    pub fn within(self, supported: ListChanges) -> Self {
        Self {
            tools: self.tools && supported.tools,
            resources: self.resources && supported.resources,
            prompts: self.prompts && supported.prompts,
        }
    }
}

/// Subscription streams that fall this far behind are told that every list
/// changed, which is what they would conclude anyway.
const BACKLOG: usize = 16;

pub struct Notifier {
    supported: ListChanges,
    sessions: Mutex<Vec<Peer<RoleServer>>>,
    streams: broadcast::Sender<ListChanges>,
}

impl Notifier {
    /// `supported`: the lists that can change while serving (none when the
    /// plugins folder is not watched); advertised as `listChanged`.
    pub fn new(supported: ListChanges) -> Self {
        Self {
            supported,
            sessions: Mutex::new(Vec::new()),
            streams: broadcast::channel(BACKLOG).0,
        }
    }

    pub fn supported(&self) -> ListChanges {
        self.supported
    }

    /// Remembers a handshake-era session, forgetting any that have closed.
    pub fn register_session(&self, peer: Peer<RoleServer>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|p| !p.is_transport_closed());
        sessions.push(peer);
    }

    /// Changes as they happen, for one `subscriptions/listen` stream.
    pub fn subscribe(&self) -> broadcast::Receiver<ListChanges> {
        self.streams.subscribe()
    }

    /// Tells every client about `changes`.
    pub async fn notify(&self, changes: ListChanges) {
        let changes = changes.within(self.supported);
        if !changes.any() {
            return;
        }
        let sessions: Vec<Peer<RoleServer>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            sessions.retain(|p| !p.is_transport_closed());
            sessions.clone()
        };
        for peer in &sessions {
            // A session that just closed fails here; it is dropped next time.
            let sent = async {
                if changes.tools {
                    peer.notify_tool_list_changed().await?;
                }
                if changes.resources {
                    peer.notify_resource_list_changed().await?;
                }
                if changes.prompts {
                    peer.notify_prompt_list_changed().await?;
                }
                Ok::<(), rmcp::ServiceError>(())
            };
            if let Err(error) = sent.await {
                tracing::debug!("cannot notify a session of a list change: {error}");
            }
        }
        // No stream listening is not an error.
        let _ = self.streams.send(changes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn streams_get_only_supported_changes() {
        let notifier = Notifier::new(ListChanges {
            tools: true,
            ..ListChanges::NONE
        });
        let mut stream = notifier.subscribe();
        notifier
            .notify(ListChanges {
                prompts: true,
                ..ListChanges::NONE
            })
            .await;
        notifier
            .notify(ListChanges {
                tools: true,
                prompts: true,
                ..ListChanges::NONE
            })
            .await;
        let first = stream.recv().await.unwrap();
        assert_eq!(
            first,
            ListChanges {
                tools: true,
                ..ListChanges::NONE
            }
        );
        assert!(stream.try_recv().is_err(), "the prompts-only change is not sent");
    }
}
