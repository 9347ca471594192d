//! A call's guest events (progress, log messages), forwarded to the client
//! while the call runs.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::logging::{self, Level};
use warden_runtime::{GuestEvent, sandbox::EVENT_BACKLOG};

/// Where one call's guest events go.
pub(crate) struct EventRoute {
    pub plugin: Arc<str>,
    pub progress: Option<ProgressToken>,
    pub log_level: Option<Level>,
}

/// The sender a call's sandbox reports its events to, and the task that
/// forwards them; neither when the client asked for no events.
pub(crate) fn start(
    peer: &Peer<RoleServer>,
    route: EventRoute,
) -> (Option<mpsc::Sender<GuestEvent>>, Option<JoinHandle<()>>) {
    if route.progress.is_none() && route.log_level.is_none() {
        return (None, None);
    }
    let (sender, receiver) = mpsc::channel(EVENT_BACKLOG);
    let task = tokio::spawn(forward(peer.clone(), route, receiver));
    (Some(sender), Some(task))
}

/// Forwards a call's progress and log messages to the client until the
/// call's sandbox is dropped. Progress must increase; anything else is
/// dropped, as are log messages below the level the client asked for.
#[allow(deprecated)] // logging: see mcp/logging.rs
async fn forward(peer: Peer<RoleServer>, route: EventRoute, mut events: mpsc::Receiver<GuestEvent>) {
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
                peer.notify_progress(param).await
            }
            GuestEvent::Log { level, message } => {
                let level = Level::from(level);
                match route.log_level {
                    Some(threshold) if level >= threshold => {
                        peer.notify_logging_message(logging::message(&route.plugin, level, message))
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
