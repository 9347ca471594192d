//! Warden: an MCP server whose tools live in sandboxed WebAssembly components.
//!
//! Data flows one way, and the modules follow it:
//! `transport` → `mcp` (the handler) → `catalog` → `plugin` / `runtime`
//! (a fresh `Sandbox` per call). Loading: `loader` reads a folder, checks
//! each `manifest` and the plugin's `declarations`, and builds a catalog.

pub mod audit;
pub mod catalog;
pub mod check;
pub mod cli;
pub mod declarations;
pub mod grants;
pub mod loader;
pub mod manifest;
pub mod mcp;
pub mod naming;
pub mod plugin;
pub mod runtime;
pub mod serve;
pub mod transport;
