//! OAuth mode: a 2025-11-25 session belongs to the principal who opened it.
//! Another principal presenting its `Mcp-Session-Id` — a leaked or guessed
//! id — is told the session does not exist, so they can neither read its
//! stream (which carries the owner's elicitation and sampling requests) nor
//! act in it (MCP's security best practices: bind sessions to the user).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::SessionManager;

use super::sessions::BoundedSessions;

pub struct SessionOwners {
    owners: Mutex<HashMap<Arc<str>, Arc<str>>>,
}

impl SessionOwners {
    pub fn new() -> Self {
        Self {
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `subject` may use `session`: the owner, or anyone for a
    /// session with no owner (unknown to Warden: rmcp answers it `404`).
    pub fn allows(&self, session: &str, subject: &str) -> bool {
        let owners = self.owners.lock().expect("session owners lock");
        owners.get(session).is_none_or(|owner| &**owner == subject)
    }

    /// Records the owner of a new session. Entries of ended sessions are
    /// dropped once there are more entries than the session cap allows, so
    /// the map stays within twice the cap.
    pub async fn record(&self, session: &str, subject: &str, sessions: &BoundedSessions) {
        let known: Vec<Arc<str>> = {
            let mut owners = self.owners.lock().expect("session owners lock");
            owners.insert(Arc::from(session), Arc::from(subject));
            if owners.len() <= 2 * sessions.max() {
                return;
            }
            owners.keys().cloned().collect()
        };
        let mut ended = Vec::new();
        for id in known {
            if !sessions.has_session(&id).await.unwrap_or(false) {
                ended.push(id);
            }
        }
        let mut owners = self.owners.lock().expect("session owners lock");
        for id in ended {
            owners.remove(&id);
        }
    }
}
