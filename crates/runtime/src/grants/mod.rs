//! What a plugin may reach, and the rules that decide each attempt.
//!
//! A grant exists only when the operator wrote it in the plugin's manifest;
//! the default is nothing at all. Every access decision Warden makes itself
//! (outgoing HTTP, sockets, what a call may ask of the client) is a function
//! in this folder, one module per capability, so the rules can be read — and
//! tested — in one place. Filesystem confinement is enforced by
//! wasmtime-wasi's capability-based directory handles (cap-std): a guest
//! sees only the mounts listed here.

mod addresses;
mod filesystem;
mod interaction;
mod network;
mod sockets;

pub use addresses::is_public;
pub use filesystem::{Mount, MountAccess, ProtectedFolders, check_mount_layout};
pub use interaction::{Asks, DEFAULT_MAX_ROUNDS, DEFAULT_MAX_TOKENS, InteractionGrant, UrlDenial};
pub use network::{DEFAULT_MAX_RESPONSE, HttpDenial, HttpGrant, HttpRule, Scheme};
pub use sockets::{SocketGrant, SocketUse};

use crate::secrets::{Redactor, Secret, Setting};

/// Everything a plugin has been granted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    pub mounts: Vec<Mount>,
    pub http: HttpGrant,
    pub sockets: SocketGrant,
    /// Variables the guest sees: copied from the host (`pass`) or set
    /// (written in clear, or read from Warden's environment or a file).
    pub env: Vec<(String, Setting)>,
    /// What `wasi:config/store` answers: the manifest's `[config]`.
    pub config: Vec<(String, Setting)>,
    /// What the plugin may ask of the client (contract 0.2.0): `[interaction]`.
    pub interaction: InteractionGrant,
}

impl Grants {
    /// Every value the plugin is given that is a secret (see `secrets`).
    pub fn secrets(&self) -> impl Iterator<Item = &Secret> {
        self.env
            .iter()
            .chain(&self.config)
            .filter_map(|(_, setting)| setting.secret())
    }

    /// What this plugin's text is redacted with, everywhere Warden writes it.
    pub fn redactor(&self) -> anyhow::Result<Redactor> {
        Redactor::new(self.secrets())
    }
}
