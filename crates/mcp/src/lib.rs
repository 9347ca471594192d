//! The MCP layer: translates between MCP requests and the catalog. It holds
//! no plugin logic of its own.

pub mod access;
pub mod principal;
pub mod state_key;

mod content;
mod handler;
mod in_flight;
pub mod interaction;
mod logging;
pub mod notifier;
mod pagination;
mod session;
mod subscription_limits;
pub mod tool_call;
pub mod trace_context;

pub use handler::{Shared, WardenServer};
pub use in_flight::InFlight;
pub use notifier::Notifier;
pub use subscription_limits::SubscriptionLimits;
