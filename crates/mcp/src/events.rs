//! A call's guest events (progress, log messages), forwarded to the client
//! while the call runs.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{Notification, ProgressNotificationParam, ProgressToken, ServerNotification};
use rmcp::service::{Peer, RequestContext};
use tokio::sync::mpsc;

use crate::logging::{self, Level};
use warden_runtime::{GuestEvent, sandbox::EVENT_BACKLOG};

/// Where one call's guest events go.
pub(crate) struct EventRoute {
    pub plugin: Arc<str>,
    pub progress: Option<ProgressToken>,
    pub log_level: Option<Level>,
}

/// Where a request's notifications go instead of its peer: a transport
/// that answers a request itself (rather than through rmcp's service loop)
/// puts one in the request's extensions and reads the other end, writing
/// what arrives before the answer.
#[derive(Clone)]
pub struct NotificationSink(mpsc::Sender<ServerNotification>);

impl NotificationSink {
    /// A sink and the receiver its notifications arrive at, in order.
    pub fn channel() -> (Self, mpsc::Receiver<ServerNotification>) {
        let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
        (Self(sender), receiver)
    }
}

/// Where one call's notifications are sent.
enum Destination {
    Peer(Peer<RoleServer>),
    Sink(mpsc::Sender<ServerNotification>),
}

impl Destination {
    async fn send(&self, notification: ServerNotification) -> Result<(), ()> {
        match self {
            Destination::Peer(peer) => peer.send_notification(notification).await.map_err(drop),
            Destination::Sink(sink) => sink.send(notification).await.map_err(drop),
        }
    }
}

/// The sender a call's sandbox reports its events to, and the forwarder
/// that sends them on: to the request's `NotificationSink` if it has one,
/// else to its peer. Neither when the client asked for no events. The
/// forwarder is run beside the call, in the same task (a task of its own
/// would cost a spawn and a wake-up of another thread on every call), and
/// ends when the call's last sender is dropped.
pub(crate) fn start(
    context: &RequestContext<RoleServer>,
    route: EventRoute,
) -> (
    Option<mpsc::Sender<GuestEvent>>,
    Option<impl Future<Output = ()> + Send + use<>>,
) {
    if route.progress.is_none() && route.log_level.is_none() {
        return (None, None);
    }
    let destination = match context.extensions.get::<NotificationSink>() {
        Some(NotificationSink(sink)) => Destination::Sink(sink.clone()),
        None => Destination::Peer(context.peer.clone()),
    };
    let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
    (Some(sender), Some(forward(destination, route, receiver)))
}

/// Forwards a call's progress and log messages to the client until the
/// call's sandbox is dropped. Progress must increase; anything else is
/// dropped, as are log messages below the level the client asked for.
#[allow(deprecated)] // logging: see mcp/logging.rs
async fn forward(destination: Destination, route: EventRoute, mut events: mpsc::Receiver<GuestEvent>) {
    let mut last = f64::NEG_INFINITY;
    while let Some(event) = events.recv().await {
        let sent = match event {
            GuestEvent::Progress {
                progress,
                total,
                message,
            } => {
                let Some(token) = &route.progress else { continue };
                if !progress.is_finite() || progress <= last {
                    continue;
                }
                last = progress;
                let mut param = ProgressNotificationParam::new(token.clone(), progress);
                if let Some(total) = total.filter(|t| t.is_finite()) {
                    param = param.with_total(total);
                }
                if let Some(message) = message {
                    param = param.with_message(message);
                }
                destination
                    .send(ServerNotification::ProgressNotification(Notification::new(param)))
                    .await
            }
            GuestEvent::Log { level, message } => {
                let level = Level::from(level);
                match route.log_level {
                    Some(threshold) if level >= threshold => {
                        let param = logging::message(&route.plugin, level, message);
                        destination
                            .send(ServerNotification::LoggingMessageNotification(Notification::new(param)))
                            .await
                    }
                    _ => continue,
                }
            }
        };
        if sent.is_err() {
            break;
        }
    }
}
