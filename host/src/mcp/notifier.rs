//! Telling connected clients that a list they may have cached changed, or
//! that a resource they subscribed to may read differently now.
//!
//! Two ways in, one per protocol era: a 2025-11-25 session (`initialize`
//! handshake) gets `notifications/*/list_changed` and, for the URIs it
//! subscribed to with `resources/subscribe`, `notifications/resources/updated`
//! through its peer; a 2026-07-28 client asks for them on a
//! `subscriptions/listen` stream, which the handler serves from `subscribe()`.

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;
use tokio::sync::broadcast;

use super::session::Session;
use crate::catalog::Catalog;

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

/// One catalog swap, as clients learn of it.
pub struct Swap {
    /// The lists that changed (already narrowed to what is supported).
    pub lists: ListChanges,
    before: Arc<Catalog>,
    after: Arc<Catalog>,
}

impl Swap {
    pub fn new(lists: ListChanges, before: Arc<Catalog>, after: Arc<Catalog>) -> Self {
        Self { lists, before, after }
    }

    /// A swap that may have changed everything (a stream that fell behind).
    pub fn everything(catalog: Arc<Catalog>) -> Self {
        Self {
            lists: ListChanges {
                tools: true,
                resources: true,
                prompts: true,
            },
            before: Arc::new(Catalog::default()),
            after: catalog,
        }
    }

    /// Whether reading `uri` may give something else now: the plugin that
    /// serves it was reloaded, removed or added.
    pub fn updated(&self, uri: &str) -> bool {
        match (self.before.resource_owner(uri), self.after.resource_owner(uri)) {
            (Some(before), Some(after)) => !Arc::ptr_eq(before, after),
            (None, None) => false,
            _ => true,
        }
    }
}

/// Subscription streams that fall this far behind are told that every list
/// changed, which is what they would conclude anyway.
const BACKLOG: usize = 16;

pub struct Notifier {
    supported: ListChanges,
    sessions: Mutex<Vec<(Peer<RoleServer>, Arc<Session>)>>,
    streams: broadcast::Sender<Arc<Swap>>,
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
    pub fn register_session(&self, peer: Peer<RoleServer>, session: Arc<Session>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|(p, _)| !p.is_transport_closed());
        sessions.push((peer, session));
    }

    /// Swaps as they happen, for one `subscriptions/listen` stream.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Swap>> {
        self.streams.subscribe()
    }

    /// Tells every client about a catalog swap: the lists that changed, and
    /// the subscribed resources whose plugin changed.
    pub async fn notify(&self, lists: ListChanges, before: Arc<Catalog>, after: Arc<Catalog>) {
        let swap = Arc::new(Swap::new(lists.within(self.supported), before, after));
        let sessions: Vec<(Peer<RoleServer>, Arc<Session>)> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            sessions.retain(|(p, _)| !p.is_transport_closed());
            sessions.clone()
        };
        let changes = swap.lists;
        for (peer, session) in &sessions {
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
                for uri in session.subscriptions().into_iter().filter(|uri| swap.updated(uri)) {
                    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await?;
                }
                Ok::<(), rmcp::ServiceError>(())
            };
            if let Err(error) = sent.await {
                tracing::debug!("cannot notify a session of a catalog change: {error}");
            }
        }
        // No stream listening is not an error.
        let _ = self.streams.send(swap);
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
        let catalog = Arc::new(Catalog::default());
        notifier
            .notify(
                ListChanges {
                    tools: true,
                    prompts: true,
                    ..ListChanges::NONE
                },
                catalog.clone(),
                catalog,
            )
            .await;
        let swap = stream.recv().await.unwrap();
        assert_eq!(
            swap.lists,
            ListChanges {
                tools: true,
                ..ListChanges::NONE
            },
            "the unsupported prompts change is dropped"
        );
        assert!(!swap.updated("test://anything"));
    }
}
