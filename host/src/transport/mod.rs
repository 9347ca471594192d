//! Transports: how MCP messages reach the handler.

pub mod http;
pub mod stdio;
