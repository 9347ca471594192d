//! Warden: an MCP server whose tools live in sandboxed WebAssembly components.
//!
//! Data flows one way, and the modules follow it:
//! `transport` → `mcp` (the handler) → `catalog` → `plugin` / `runtime`
//! (a fresh `Sandbox` per call), which speaks to a component through the
//! `warden:plugin` contract or, for a `plain` component, through its own
//! exported functions. Loading: `loader` reads a folder, checks
//! each `manifest` and the plugin's `declarations`, with compiled code from
//! the `cache`; tools are served with the `annotations` its grants make true. While serving, the `watcher` reports changed files and the
//! `reconciler` reloads them, swaps in a new catalog and notifies clients.
//! `dev` adds a build of the plugin's crate in front of that loop.
//! Over HTTP, `auth` says who a request is from (in OAuth mode, a principal)
//! and `access` what they may use.

pub mod call;
pub mod check;
pub mod cli;
pub mod dev;
pub mod embed_docs;
pub mod inspect;
pub mod plugin_at;
pub mod project;
pub mod serve;
