//! What every connection of one server shares.

use std::sync::Arc;

use rmcp::model::RequestStateCodec;

use crate::in_flight::InFlight;
use crate::interaction;
use crate::notifier::Notifier;
use crate::tasks::Tasks;
use warden_plugins::catalog::CatalogHandle;
use warden_runtime::Runtime;
use warden_runtime::audit_log::AuditLog;

/// What every connection shares: one catalog, one runtime, one audit log,
/// and the notifier that tells every client when the catalog changes.
pub struct Shared {
    pub catalog: CatalogHandle,
    pub runtime: Arc<Runtime>,
    pub audit: Option<Arc<AuditLog>>,
    pub in_flight: InFlight,
    pub notifier: Arc<Notifier>,
    /// Seals the `requestState` of 2026-07-28 input-required results.
    pub state_codec: RequestStateCodec,
    /// The `requestState`s this process accepted: each is accepted once.
    pub used_states: interaction::UsedStates,
    /// MCP tasks: the store, and the tasks this replica runs.
    pub tasks: Arc<Tasks>,
}
