//! Transports: how MCP messages reach the handler.

mod body_deadline;
mod connections;
pub mod http;
mod sessions;
pub mod stdio;
mod write_deadline;

pub use connections::ConnectionLimits;
