//! The MCP layer: translates between MCP requests and the catalog. It holds
//! no plugin logic of its own.

mod content;
mod handler;
pub mod notifier;
mod pagination;

pub use handler::{Shared, WardenServer};
pub use notifier::{ListChanges, Notifier};
