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

pub mod access;
pub mod annotations;
pub mod audit;
pub mod auth;
pub mod cache;
pub mod call;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod declaration_limits;
pub mod declarations;
pub mod dev;
pub mod embed_docs;
pub mod grants;
pub mod inspect;
pub mod load_error;
pub mod loader;
pub mod manifest;
pub mod mcp;
pub mod metrics;
pub mod naming;
pub mod param_headers;
pub mod pinned;
pub mod plain;
pub mod plugin;
pub mod plugin_at;
pub mod principal;
pub mod printable;
pub mod project;
pub mod reconciler;
pub mod runtime;
pub mod schema_budget;
pub mod schema_validation;
pub mod serve;
pub mod state_key;
pub mod transport;
pub mod uri_overlap;
pub mod uri_template;
pub mod watcher;
