//! How many resource subscriptions one client may hold, and how long a
//! subscribed URI may be: each is kept in memory for the client's lifetime
//! and checked at every catalog swap, so both are bounded.

use rmcp::ErrorData as McpError;

#[derive(Debug, Clone, Copy)]
pub struct SubscriptionLimits {
    /// URIs per 2025-11-25 session (`resources/subscribe`) and per
    /// 2026-07-28 `subscriptions/listen` stream (`resourceSubscriptions`).
    pub per_client: usize,
}

impl Default for SubscriptionLimits {
    fn default() -> Self {
        Self {
            per_client: Self::DEFAULT_PER_CLIENT,
        }
    }
}

impl SubscriptionLimits {
    pub const DEFAULT_PER_CLIENT: usize = 100;
    /// The longest URI a client may subscribe to.
    pub const MAX_URI_BYTES: usize = 4096;

    /// `-32602` for a URI too long to subscribe to.
    pub fn check_uri(&self, uri: &str) -> Result<(), McpError> {
        if uri.len() > Self::MAX_URI_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "cannot subscribe to a URI of {} bytes; at most {} are allowed",
                    uri.len(),
                    Self::MAX_URI_BYTES
                ),
                Some(serde_json::json!({ "maxUriBytes": Self::MAX_URI_BYTES })),
            ));
        }
        Ok(())
    }

    /// `-32602` for a session that already holds its limit.
    pub fn full(&self, uri: &str) -> McpError {
        McpError::invalid_params(
            format!(
                "this session already holds {} resource subscriptions, the most allowed; \
                 unsubscribe from one before subscribing to `{uri}`",
                self.per_client
            ),
            Some(serde_json::json!({ "uri": uri, "maxSubscriptions": self.per_client })),
        )
    }

    /// `-32602` for a `subscriptions/listen` whose `resourceSubscriptions`
    /// are too many or too long.
    pub fn check_list(&self, uris: &[String]) -> Result<(), McpError> {
        if uris.len() > self.per_client {
            return Err(McpError::invalid_params(
                format!(
                    "subscriptions/listen asks for {} resource subscriptions; at most {} are allowed per stream",
                    uris.len(),
                    self.per_client
                ),
                Some(serde_json::json!({ "maxSubscriptions": self.per_client })),
            ));
        }
        uris.iter().try_for_each(|uri| self.check_uri(uri))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_uris_are_bounded() {
        let limits = SubscriptionLimits { per_client: 2 };
        assert!(limits.check_list(&["a://1".into(), "a://2".into()]).is_ok());
        let error = limits
            .check_list(&["a://1".into(), "a://2".into(), "a://3".into()])
            .unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            error.message.contains("asks for 3 resource subscriptions; at most 2"),
            "{}",
            error.message
        );
        let long = format!("a://{}", "x".repeat(SubscriptionLimits::MAX_URI_BYTES));
        assert!(limits.check_uri(&long).is_err());
        assert!(limits.check_list(&[long]).is_err());
    }
}
