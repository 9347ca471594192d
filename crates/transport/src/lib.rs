//! Transports: how MCP messages reach the handler.

pub mod auth;

mod authenticate;
mod body_deadline;
mod connections;
mod drain;
pub mod http;
pub mod replica;
mod scope_check;
mod session_owners;
mod sessions;
mod stateless_call;
pub mod stdio;
mod write_deadline;

pub use connections::ConnectionLimits;
