//! Which plugin log messages reach the client, and in what shape.
//!
//! A plugin's `host.log` always reaches the server log (see the sandbox);
//! the client gets it as `notifications/message` only at or above the level
//! it asked for: `logging/setLevel` on the 2025-11-25 wire, the request's own
//! `_meta` `io.modelcontextprotocol/logLevel` on 2026-07-28.

// rmcp marks logging deprecated (SEP-2577), but both wires Warden serves
// still define it, and clients use it.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};

use warden_runtime::contract::LogLevel;

/// RFC 5424 severity, least severe first, so levels compare by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl From<LogLevel> for Level {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => Level::Debug,
            LogLevel::Info => Level::Info,
            LogLevel::Notice => Level::Notice,
            LogLevel::Warning => Level::Warning,
            LogLevel::Error => Level::Error,
            LogLevel::Critical => Level::Critical,
            LogLevel::Alert => Level::Alert,
            LogLevel::Emergency => Level::Emergency,
        }
    }
}

impl From<LoggingLevel> for Level {
    fn from(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => Level::Debug,
            LoggingLevel::Info => Level::Info,
            LoggingLevel::Notice => Level::Notice,
            LoggingLevel::Warning => Level::Warning,
            LoggingLevel::Error => Level::Error,
            LoggingLevel::Critical => Level::Critical,
            LoggingLevel::Alert => Level::Alert,
            LoggingLevel::Emergency => Level::Emergency,
        }
    }
}

impl From<Level> for LoggingLevel {
    fn from(level: Level) -> Self {
        match level {
            Level::Debug => LoggingLevel::Debug,
            Level::Info => LoggingLevel::Info,
            Level::Notice => LoggingLevel::Notice,
            Level::Warning => LoggingLevel::Warning,
            Level::Error => LoggingLevel::Error,
            Level::Critical => LoggingLevel::Critical,
            Level::Alert => LoggingLevel::Alert,
            Level::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// The level a 2026-07-28 request asked for in its `_meta`, if any.
pub fn requested(meta: &rmcp::model::RequestMetaObject) -> Option<Level> {
    meta.log_level().map(Level::from)
}

/// The notification for one plugin message; the logger is the plugin's name.
pub fn message(plugin: &str, level: Level, text: String) -> LoggingMessageNotificationParam {
    let mut param = LoggingMessageNotificationParam::new(level.into(), serde_json::Value::String(text));
    param.logger = Some(plugin.to_string());
    param
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_compare_by_severity() {
        assert!(Level::Error >= Level::Warning);
        assert!(Level::Info >= Level::Info);
        assert!(Level::Debug < Level::Info);
        assert_eq!(Level::from(LogLevel::Emergency), Level::Emergency);
        assert_eq!(Level::from(LoggingLevel::from(Level::Notice)), Level::Notice);
    }
}
