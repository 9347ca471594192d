//! Host-side bindings for each version of the `warden:plugin` contract in
//! `wit/`, one module per version. Every version shares the latest version's
//! `types` (a released version only ever gains types), so the rest of Warden
//! speaks one set of types; a plugin's exports are called through the
//! adapter of the version it was built against (`plugin::Exports`).
//!
//! Imports (the `host` interface) are synchronous: they only hand events to
//! the call's context. Exports are async so that a call can yield at epoch
//! ticks, be timed out and be cancelled.

pub mod v0_1_0;
pub mod v0_2_0;

pub use v0_2_0::warden::plugin::host::{Interaction, LogLevel};
pub use v0_2_0::warden::plugin::types;

/// The versions this Warden serves, oldest first.
pub const VERSIONS: [&str; 2] = [v0_1_0::VERSION, v0_2_0::VERSION];
