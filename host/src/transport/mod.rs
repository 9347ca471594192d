//! Transports: how MCP messages reach the handler.

pub mod stdio;
