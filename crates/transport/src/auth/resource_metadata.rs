//! OAuth 2.0 Protected Resource Metadata (RFC 9728) and the
//! `WWW-Authenticate` challenges (RFC 6750) that point clients to it: how
//! an MCP client learns which authorization server to get a token from.

use anyhow::Result;

use super::oauth::{OAuthSettings, check_resource};
use warden_mcp::access::AccessPolicy;

/// The metadata document and where it is served.
pub struct ResourceMetadata {
    /// The path clients look for first: the well-known prefix inserted
    /// before the resource's path (`/.well-known/oauth-protected-resource/mcp`).
    pub path: String,
    /// The same, absolute, for `resource_metadata="…"`.
    pub url: String,
    resource: String,
    issuer: String,
    algorithms: Vec<String>,
}

pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ResourceMetadata {
    pub fn new(settings: &OAuthSettings) -> Result<Self> {
        let uri = check_resource(&settings.resource)?;
        let origin = format!(
            "{}://{}",
            uri.scheme_str().unwrap_or("https"),
            uri.authority().map_or("", |a| a.as_str())
        );
        let path = format!("{WELL_KNOWN}{}", uri.path().trim_end_matches('/'));
        Ok(Self {
            url: format!("{origin}{path}"),
            path,
            resource: settings.resource.clone(),
            issuer: settings.issuer.clone(),
            algorithms: settings.algorithms.iter().map(|a| format!("{a:?}")).collect(),
        })
    }

    /// The JSON document, with the scopes of the policy now in force.
    pub fn document(&self, policy: &AccessPolicy) -> String {
        let document = serde_json::json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": policy.scopes(),
            "bearer_methods_supported": ["header"],
            "resource_signing_alg_values_supported": self.algorithms,
            "resource_name": "Warden",
        });
        format!("{document}\n")
    }

    /// For a request without a token: where to learn how to get one.
    pub fn challenge(&self) -> String {
        format!("Bearer resource_metadata=\"{}\"", self.url)
    }

    /// For a token that is refused (RFC 6750 `invalid_token`).
    pub fn invalid_token(&self, why: &str) -> String {
        format!(
            "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{}\"",
            quotable(why),
            self.url
        )
    }

    /// For a valid token that does not reach what was asked for (RFC 6750
    /// `insufficient_scope`, with the scopes that would).
    pub fn insufficient_scope(&self, scopes: &[&str], why: &str) -> String {
        let scope = if scopes.is_empty() {
            String::new()
        } else {
            format!(", scope=\"{}\"", quotable(&scopes.join(" ")))
        };
        format!(
            "Bearer error=\"insufficient_scope\"{scope}, error_description=\"{}\", resource_metadata=\"{}\"",
            quotable(why),
            self.url
        )
    }
}

/// RFC 6750 allows printable ASCII but `"` and `\` inside quoted values.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || !(' '..='~').contains(&c) {
                '\''
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_mcp::access::AccessPolicy;

    #[test]
    fn served_at_the_resource_path_with_the_policy_scopes() {
        let settings = OAuthSettings {
            issuer: "https://auth.example.com".into(),
            resource: "https://warden.example.com/mcp".into(),
            algorithms: vec![jsonwebtoken::Algorithm::RS256],
            policy: AccessPolicy::parse("[[allow]]\nscope = \"notes\"\nplugins = [\"notes\"]").unwrap(),
        };
        let metadata = ResourceMetadata::new(&settings).unwrap();
        assert_eq!(metadata.path, "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(
            metadata.url,
            "https://warden.example.com/.well-known/oauth-protected-resource/mcp"
        );
        let document: serde_json::Value = serde_json::from_str(&metadata.document(&settings.policy)).unwrap();
        assert_eq!(document["resource"], "https://warden.example.com/mcp");
        assert_eq!(document["authorization_servers"][0], "https://auth.example.com");
        assert_eq!(document["scopes_supported"][0], "notes");
        assert_eq!(
            metadata.challenge(),
            "Bearer resource_metadata=\"https://warden.example.com/.well-known/oauth-protected-resource/mcp\""
        );
        let refused = metadata.insufficient_scope(&["notes", "admin"], "needs \"notes\"");
        assert!(
            refused.starts_with(
                "Bearer error=\"insufficient_scope\", scope=\"notes admin\", error_description=\"needs 'notes'\""
            ),
            "{refused}"
        );
    }
}
