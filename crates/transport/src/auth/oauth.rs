//! OAuth mode: Warden as a resource server (MCP's authorization spec).
//! Access tokens are JWTs issued by the operator's authorization server;
//! each is checked here — signature against the server's published keys,
//! an allowed algorithm, issuer, audience (Warden's own resource URI, RFC
//! 8707), expiry and not-before — and turned into a `Principal`.

use std::str::FromStr;

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arc_swap::ArcSwap;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::jwks::Jwks;
use super::{Principal, fetch};
use warden_mcp::access::AccessPolicy;

/// What the operator configured.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// The authorization server's issuer identifier, exactly as it writes
    /// it in its metadata and its tokens' `iss`.
    pub issuer: String,
    /// Warden's canonical resource URI: the audience tokens must name.
    pub resource: String,
    pub algorithms: Vec<Algorithm>,
    /// The access policy at start; `OAuth::policy` is the current one.
    pub policy: AccessPolicy,
}

/// The signature algorithms accepted unless the operator says otherwise.
pub const DEFAULT_ALGORITHMS: &str = "RS256,ES256";

/// Parses `--oauth-algorithms`: asymmetric algorithms only. A shared-secret
/// (HS*) algorithm would let anyone holding the "public" key mint tokens,
/// and `none` is never a signature.
pub fn parse_algorithms(list: &str) -> Result<Vec<Algorithm>> {
    let mut algorithms = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let algorithm = Algorithm::from_str(name).map_err(|_| {
            anyhow::anyhow!(
                "--oauth-algorithms: `{name}` is not a JWS algorithm Warden verifies; use RS256, RS384, RS512, \
                 PS256, PS384, PS512, ES256, ES384 or EdDSA"
            )
        })?;
        if matches!(algorithm, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) {
            bail!(
                "--oauth-algorithms: `{name}` uses a shared secret, not the authorization server's public keys; use RS256 or ES256"
            );
        }
        algorithms.push(algorithm);
    }
    if algorithms.is_empty() {
        bail!("--oauth-algorithms is empty; name at least one, such as RS256");
    }
    Ok(algorithms)
}

/// Checks `--resource`: an absolute http(s) URI without a fragment (RFC 8707).
pub fn check_resource(resource: &str) -> Result<http::Uri> {
    if resource.contains('#') {
        bail!("--resource `{resource}` has a fragment; a resource URI may not (RFC 8707)");
    }
    let uri: http::Uri = resource
        .parse()
        .with_context(|| format!("--resource `{resource}` is not a URI"))?;
    if !matches!(uri.scheme_str(), Some("https" | "http")) || uri.host().is_none() {
        bail!("--resource `{resource}` must be an absolute https URL, such as https://warden.example.com/mcp");
    }
    Ok(uri)
}

pub struct OAuth {
    pub settings: OAuthSettings,
    /// Replaced whole when the policy file changes (`policy_file`); shared
    /// with every principal, whose subscriptions follow it.
    policy: Arc<ArcSwap<AccessPolicy>>,
    jwks: Jwks,
    validation: Validation,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.settings.issuer)
            .field("resource", &self.settings.resource)
            .finish_non_exhaustive()
    }
}

/// The longest token looked at; real ones are a few kilobytes.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

impl OAuth {
    /// Finds the authorization server's metadata (RFC 8414, then OpenID
    /// discovery) and fetches its keys. Fails if either cannot be had.
    pub async fn discover(settings: OAuthSettings) -> Result<Self> {
        check_resource(&settings.resource)?;
        fetch::check_url(&settings.issuer).context("--oauth-issuer")?;
        let metadata = metadata(&settings.issuer).await?;
        let jwks_uri = metadata
            .get("jwks_uri")
            .and_then(Value::as_str)
            .with_context(|| format!("the metadata of {} has no `jwks_uri`", settings.issuer))?;
        let jwks = Jwks::fetch(jwks_uri)
            .await
            .with_context(|| format!("cannot fetch the signing keys of {}", settings.issuer))?;
        let mut validation = Validation::new(settings.algorithms[0]);
        validation.algorithms = settings.algorithms.clone();
        validation.set_issuer(&[&settings.issuer]);
        validation.set_audience(&[&settings.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.leeway = warden_mcp::principal::LEEWAY_SECS;
        tracing::info!(
            issuer = settings.issuer,
            resource = settings.resource,
            "OAuth: tokens from {} for {} (keys from {})",
            settings.issuer,
            settings.resource,
            warden_runtime::secrets::SecretAddress::new(jwks_uri)
        );
        Ok(Self {
            policy: Arc::new(ArcSwap::from_pointee(settings.policy.clone())),
            settings,
            jwks,
            validation,
        })
    }

    /// The access policy now in force.
    pub fn policy(&self) -> Arc<AccessPolicy> {
        self.policy.load_full()
    }

    /// Puts `policy` in force for every request from now on.
    pub fn set_policy(&self, policy: AccessPolicy) {
        self.policy.store(Arc::new(policy));
    }

    /// The principal a token stands for, or why it is refused (said to the
    /// client in `error_description`, so it names no secret).
    pub async fn verify(&self, token: &str) -> Result<Principal, String> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(format!("the token is longer than {MAX_TOKEN_BYTES} bytes"));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| "the token is not a signed JWT with a supported algorithm".to_string())?;
        if !self.validation.algorithms.contains(&header.alg) {
            return Err(format!(
                "the token is signed with {:?}, which this server does not accept",
                header.alg
            ));
        }
        let Some(key) = self.jwks.key(header.kid.as_deref()).await else {
            return Err("the token's signing key is not one of the authorization server's keys".to_string());
        };
        if key.alg.is_some_and(|alg| alg != header.alg) {
            return Err("the token's algorithm does not match its key's".to_string());
        }
        let mut validation = self.validation.clone();
        validation.algorithms = vec![header.alg];
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &validation).map_err(|error| {
                match error.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired".to_string(),
                    ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_string(),
                    ErrorKind::InvalidAudience => format!(
                        "the token is not for this resource (aud must be {})",
                        self.settings.resource
                    ),
                    ErrorKind::InvalidIssuer => format!("the token was not issued by {}", self.settings.issuer),
                    ErrorKind::InvalidSignature => "the token's signature does not verify".to_string(),
                    ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
                    ErrorKind::InvalidClaimFormat(claim) => format!("the token's `{claim}` claim is malformed"),
                    _ => "the token is malformed".to_string(),
                }
            })?;
        let claims = data.claims;
        let Some(subject) = claims.get("sub").and_then(Value::as_str).map(str::to_string) else {
            return Err("the token's `sub` claim is not a string".to_string());
        };
        Ok(Principal::new(subject, claims, self.policy.clone()))
    }
}

/// Where an issuer's metadata may be: RFC 8414's well-known path (inserted
/// before the issuer's path), then OpenID Connect's (both insertion and
/// appending), the order MCP's authorization spec gives clients.
fn metadata_urls(issuer: &str) -> Result<Vec<String>> {
    let shown = warden_runtime::secrets::SecretAddress::new(issuer);
    let uri: http::Uri = issuer
        .parse()
        .with_context(|| format!("--oauth-issuer `{shown}` is not a URL"))?;
    if uri.query().is_some() {
        bail!("--oauth-issuer `{shown}` has a query; an issuer identifier may not (RFC 8414)");
    }
    let origin = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map_or("", |a| a.as_str())
    );
    let path = uri.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
}

/// The first metadata document found, checked to be the issuer's own.
async fn metadata(issuer: &str) -> Result<Value> {
    let mut tried = Vec::new();
    for url in metadata_urls(issuer)? {
        match fetch::json(&url).await {
            Ok(document) => {
                let stated = document.get("issuer").and_then(Value::as_str);
                if stated != Some(issuer) {
                    bail!(
                        "the metadata at {url} is for issuer {stated:?}, not {issuer:?}; --oauth-issuer must be \
                         the issuer exactly as the authorization server writes it"
                    );
                }
                return Ok(document);
            }
            Err(error) => tried.push(format!("{url}: {error:#}")),
        }
    }
    bail!(
        "cannot find the metadata of the authorization server {issuer}; tried\n  {}",
        tried.join("\n  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_the_specs_say() {
        assert_eq!(
            metadata_urls("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("https://auth.example.com/realms/team/").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/realms/team",
                "https://auth.example.com/.well-known/openid-configuration/realms/team",
                "https://auth.example.com/realms/team/.well-known/openid-configuration",
            ]
        );
        assert!(metadata_urls("https://auth.example.com/?tenant=1").is_err());
    }

    #[test]
    fn only_asymmetric_algorithms_are_accepted() {
        assert_eq!(
            parse_algorithms("RS256, ES256").unwrap(),
            [Algorithm::RS256, Algorithm::ES256]
        );
        assert!(
            parse_algorithms("HS256")
                .unwrap_err()
                .to_string()
                .contains("shared secret")
        );
        assert!(
            parse_algorithms("none")
                .unwrap_err()
                .to_string()
                .contains("not a JWS algorithm")
        );
        assert!(parse_algorithms("").is_err());
    }

    #[test]
    fn resource_uris_are_absolute_without_fragments() {
        assert!(check_resource("https://warden.example.com/mcp").is_ok());
        assert!(check_resource("https://warden.example.com/mcp#x").is_err());
        assert!(check_resource("/mcp").is_err());
    }
}
