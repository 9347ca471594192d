//! Plugins as Warden serves them. The `loader` reads a plugins folder: each
//! `manifest` and component becomes a `plugin` (a `warden:plugin` component,
//! or a `plain` one described from its own exports), its `declarations`
//! checked against their limits and budgets (a large component served first
//! on baseline code: `tiering`) and its tools served with the
//! `annotations` its grants make true. The `catalog` is what one moment
//! serves; while serving, the `watcher` reports changed files, each
//! `root_folder` follows a plugins folder's name, and the `reconciler` reloads them and swaps in a new catalog. Knows no transport
//! and no MCP session: the layer above asks it for plugins and targets.

pub mod annotations;
pub mod catalog;
pub mod compilations;
pub mod declaration_limits;
pub mod declarations;
pub mod discovery;
pub mod load_error;
pub mod load_summary;
pub mod loader;
pub mod manifest_tools;
pub mod param_headers;
pub mod plain;
pub mod plugin;
pub mod reconciler;
pub mod root_folder;
pub mod schema_budget;
pub mod schema_validation;
pub mod tiering;
pub mod uri_overlap;
pub mod uri_template;
pub mod watcher;
