//! `warden`, the binary: one module per command, each a thin shell that
//! turns its arguments (`cli`) into plain values for the library crates
//! below it — `warden-transport` → `warden-mcp` → `warden-plugins` →
//! `warden-runtime` (the README's Layout section is the map). `dev` adds a
//! build of the plugin's project (`project`) in front of the reload loop.

// What this crate shows a terminal is escaped (log_writer); the package's
// tests print freely (host/Cargo.toml).
#![deny(clippy::disallowed_macros)]

pub mod call;
pub mod check;
pub mod cli;
pub mod dev;
pub mod embed_docs;
pub mod hangup;
pub mod inspect;
pub mod log_writer;
pub mod plugin_at;
pub mod project;
pub mod pull;
pub mod serve;
