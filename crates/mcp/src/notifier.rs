//! Telling connected clients that a list they may have cached changed, or
//! that a resource they subscribed to may read differently now.
//!
//! The catalog publishes every swap; nothing here is ever awaited by the
//! reconciler. Two ways out, one per protocol era: each 2025-11-25 session
//! (`initialize` handshake, over HTTP or stdio) gets a task of its own that
//! sends `notifications/*/list_changed` and, for the URIs it subscribed to
//! with `resources/subscribe`, `notifications/resources/updated` through its
//! peer; a 2026-07-28 client asks for them on a `subscriptions/listen`
//! stream, which the handler serves from a `Swaps` of its own. A client that
//! stops reading stalls only its own task: the swaps it misses are dropped
//! (it is told that everything changed when it catches up).

use std::sync::{Arc, Weak};

use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;
use tokio::sync::broadcast::{self, error::RecvError};

use super::session::Session;
use super::subscription_limits::SubscriptionLimits;
use crate::access;
use crate::principal::Principal;
use warden_plugins::catalog::{CatalogHandle, ListChanges, Swap};

pub struct Notifier {
    supported: ListChanges,
    catalog: CatalogHandle,
    limits: SubscriptionLimits,
}

impl Notifier {
    /// `supported`: the lists that can change while serving (none when the
    /// plugins folder is not watched); advertised as `listChanged`.
    pub fn new(supported: ListChanges, catalog: CatalogHandle, limits: SubscriptionLimits) -> Self {
        Self {
            supported,
            catalog,
            limits,
        }
    }

    pub fn supported(&self) -> ListChanges {
        self.supported
    }

    pub fn limits(&self) -> &SubscriptionLimits {
        &self.limits
    }

    /// Swaps from now on, for one `subscriptions/listen` stream.
    pub fn subscribe(&self) -> Swaps {
        Swaps {
            receiver: self.catalog.subscribe(),
            catalog: self.catalog.clone(),
            supported: self.supported,
        }
    }

    /// Delivers every later swap to a handshake-era session, in a task of
    /// its own that ends when the session does.
    pub fn register_session(&self, peer: Peer<RoleServer>, session: &Arc<Session>) {
        let swaps = self.subscribe();
        let closed = session.closed();
        let session = Arc::downgrade(session);
        tokio::spawn(async move {
            tokio::select! {
                () = closed.cancelled() => {}
                () = deliver(peer, session, swaps) => {}
            }
        });
    }
}

/// The swaps one subscriber sees, narrowed to the lists that can change.
pub struct Swaps {
    receiver: broadcast::Receiver<Arc<Swap>>,
    catalog: CatalogHandle,
    supported: ListChanges,
}

impl Swaps {
    /// The next swap and the lists it changed; `None` when no more can come.
    /// A subscriber that fell behind gets one swap that changed everything.
    pub async fn next(&mut self) -> Option<(ListChanges, Arc<Swap>)> {
        let swap = match self.receiver.recv().await {
            Ok(swap) => swap,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!("a slow client missed {missed} catalog swaps; telling it everything changed");
                Arc::new(Swap::everything(self.catalog.snapshot()))
            }
            Err(RecvError::Closed) => return None,
        };
        Some((swap.lists.within(self.supported), swap))
    }
}

/// A subscription whose subscriber the policy in force no longer grants the
/// resource: dropped, so nothing more is sent for it.
fn ended_by_policy(session: &Weak<Session>, uri: &str, subscriber: Option<&Principal>) {
    if let Some(session) = session.upgrade() {
        session.unsubscribe(uri);
    }
    tracing::info!(
        principal = subscriber.map(|p| p.subject.as_str()),
        "ended the subscription to `{uri}`: the access policy no longer grants it"
    );
}

/// Sends each swap to one session until it closes. The session is held
/// weakly: the task must not keep it (and so itself) alive.
async fn deliver(peer: Peer<RoleServer>, session: Weak<Session>, mut swaps: Swaps) {
    while let Some((lists, swap)) = swaps.next().await {
        let Some(subscriptions) = session.upgrade().map(|s| s.subscriptions()) else {
            return;
        };
        let sent = async {
            if lists.tools {
                peer.notify_tool_list_changed().await?;
            }
            if lists.resources {
                peer.notify_resource_list_changed().await?;
            }
            if lists.prompts {
                peer.notify_prompt_list_changed().await?;
            }
            for (uri, subscriber) in subscriptions.into_iter().filter(|(uri, _)| swap.updated(uri)) {
                let grant = subscriber.as_ref().map(|principal| principal.permissions_now());
                if !access::may_deliver(grant.as_ref(), &swap, &uri) {
                    ended_by_policy(&session, &uri, subscriber.as_deref());
                    continue;
                }
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await?;
            }
            Ok::<(), rmcp::ServiceError>(())
        };
        if let Err(error) = sent.await {
            tracing::debug!("cannot notify a session of a catalog change: {error}");
            if peer.is_transport_closed() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_plugins::catalog::Catalog;

    fn notifier(catalog: &CatalogHandle) -> Notifier {
        Notifier::new(
            ListChanges {
                tools: true,
                ..ListChanges::NONE
            },
            catalog.clone(),
            SubscriptionLimits::default(),
        )
    }

    #[tokio::test]
    async fn streams_get_only_supported_changes() {
        let catalog = CatalogHandle::default();
        let mut swaps = notifier(&catalog).subscribe();
        catalog.replace(Arc::new(Catalog::default()));
        let (lists, swap) = swaps.next().await.unwrap();
        assert_eq!(lists, ListChanges::NONE, "nothing visible changed");
        assert!(!swap.updated("test://anything"));
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_is_told_everything_changed_and_never_blocks_the_publisher() {
        let catalog = CatalogHandle::default();
        let mut swaps = notifier(&catalog).subscribe();
        // Far more swaps than the backlog, none read: the publisher never waits.
        for _ in 0..1000 {
            catalog.replace(Arc::new(Catalog::default()));
        }
        let (lists, _) = swaps.next().await.unwrap();
        assert_eq!(
            lists,
            ListChanges {
                tools: true,
                ..ListChanges::NONE
            },
            "everything, narrowed to what is supported"
        );
    }
}
