//! Warden's side of OCI registries: pulling components into a plugins
//! folder (`install`), keeping a fleet's folder in step with a sources file
//! and its lock (`sources`), and publishing (`publish`). Every answer a
//! registry gives is bounded (`client`); whether a pulled component may be
//! served is decided by `warden_origin::Trust`, the same check every load
//! makes.

pub mod client;
pub mod credentials;
pub mod install;
pub mod publish;
pub mod pull;
pub mod sources;

pub use client::{Limits, Registry};
pub use install::{Installed, TagMoves, install};
