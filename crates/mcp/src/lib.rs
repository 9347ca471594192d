//! The MCP layer: translates between MCP requests and the catalog. It holds
//! no plugin logic of its own.

pub mod access;
pub mod principal;
pub mod state_key;

mod content;
mod errors;
mod events;
mod handler;
mod in_flight;
pub mod interaction;
pub mod invocation;
mod lists;
mod logging;
pub mod notifier;
mod pagination;
mod plugin_call;
mod request_context;
pub mod resolve;
mod server;
mod session;
mod shared;
mod subscription_limits;
mod subscriptions;
mod task_call;
pub mod tasks;
pub mod tool_call;
pub mod trace_context;

pub use events::NotificationSink;
pub use in_flight::InFlight;
pub use notifier::Notifier;
pub use server::WardenServer;
pub use shared::Shared;
pub use subscription_limits::SubscriptionLimits;
