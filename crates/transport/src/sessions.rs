//! The 2025-11-25 sessions the HTTP transport keeps: rmcp's in-memory
//! `LocalSessionManager`, with a cap on how many live at once and an idle
//! timeout after which a session is ended.
//!
//! With a replica name (`--replica-id`), every session id this process
//! makes starts with `NAME.`, so a proxy in front of several replicas can
//! send a session's requests to the replica that holds it (README,
//! "Replicas behind nginx").
//!
//! rmcp answers a session it could not create with a bare `500`; the
//! refusal is flagged in a task-local so the HTTP layer can answer `503`
//! with a JSON-RPC error instead (`refusing`).

use std::cell::Cell;
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::session_id;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, create_local_session,
};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage, SessionId};
use std::sync::Arc;

pub struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// The replica name session ids start with (`NAME.`), if any.
    replica: Option<String>,
    /// Held while counting and creating, so two new sessions cannot both
    /// take the last place.
    creating: tokio::sync::Mutex<()>,
}

impl BoundedSessions {
    /// At most `max` sessions; one that sees no request for `idle` is ended
    /// (an open GET stream does not count as activity: rmcp's rule).
    /// With `replica`, every session id starts with `replica.`.
    pub fn new(max: usize, idle: Duration, replica: Option<String>) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            max,
            replica,
            creating: tokio::sync::Mutex::new(()),
        }
    }

    /// The most sessions kept at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Sessions alive now.
    pub async fn count(&self) -> usize {
        self.inner.sessions.read().await.len()
    }
}

tokio::task_local! {
    static REFUSED: Cell<bool>;
}

/// Runs `request` (one HTTP request's handling), and says whether it was
/// refused a session because the server is full.
pub async fn refusing<T>(request: impl Future<Output = T>) -> (T, bool) {
    REFUSED
        .scope(Cell::new(false), async {
            let output = request.await;
            (output, REFUSED.with(Cell::get))
        })
        .await
}

#[derive(Debug)]
pub enum SessionsError {
    /// The server already holds this many sessions.
    Full(usize),
    Local(LocalSessionManagerError),
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Full(max) => write!(
                f,
                "the server already holds {max} sessions, the most it keeps; end an unused one (DELETE) or retry later"
            ),
            Self::Local(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(error: LocalSessionManagerError) -> Self {
        Self::Local(error)
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _creating = self.creating.lock().await;
        if self.count().await >= self.max {
            let _ = REFUSED.try_with(|refused| refused.set(true));
            tracing::debug!("refused a new session: {} are open", self.max);
            return Err(SessionsError::Full(self.max));
        }
        let Some(replica) = &self.replica else {
            return Ok(self.inner.create_session().await?);
        };
        // What rmcp's own `create_session` does, with the id prefixed.
        let id: SessionId = format!("{replica}.{}", session_id()).into();
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sessions_past_the_cap_are_refused_and_flagged() {
        let sessions = BoundedSessions::new(2, Duration::from_secs(60), None);
        let (first, _) = sessions.create_session().await.unwrap();
        let (_second, _) = sessions.create_session().await.unwrap();
        let (refused, flagged) = refusing(sessions.create_session()).await;
        let error = refused.err().expect("the third is refused");
        assert!(matches!(error, SessionsError::Full(2)));
        assert!(error.to_string().contains("already holds 2 sessions"), "{error}");
        assert!(flagged);
        sessions.close_session(&first).await.unwrap();
        let (created, flagged) = refusing(sessions.create_session()).await;
        assert!(created.is_ok() && !flagged, "a closed session frees its place");
    }

    #[tokio::test]
    async fn a_replica_name_prefixes_every_session_id() {
        let sessions = BoundedSessions::new(2, Duration::from_secs(60), Some("r2".into()));
        let (first, _) = sessions.create_session().await.unwrap();
        let (second, _) = sessions.create_session().await.unwrap();
        assert!(
            first.starts_with("r2.") && second.starts_with("r2."),
            "{first} {second}"
        );
        assert_ne!(first, second);
        assert!(sessions.has_session(&first).await.unwrap());
        assert_eq!(sessions.count().await, 2);
        let (refused, flagged) = refusing(sessions.create_session()).await;
        assert!(refused.is_err() && flagged, "the cap holds for prefixed ids too");
        sessions.close_session(&first).await.unwrap();
        assert!(!sessions.has_session(&first).await.unwrap());
        let (plain, _) = BoundedSessions::new(1, Duration::from_secs(60), None)
            .create_session()
            .await
            .unwrap();
        assert!(!plain.contains('.'), "{plain}");
    }
}
