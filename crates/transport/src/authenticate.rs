//! Who may send MCP requests over HTTP: anyone (loopback, or behind an
//! authenticating proxy), the holder of the one bearer token, or — OAuth
//! mode — a caller with a valid access token from the operator's
//! authorization server, who becomes a `Principal`.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::auth::oauth::OAuth;
use crate::auth::resource_metadata::ResourceMetadata;
use warden_mcp::principal::Principal;

pub enum Authentication {
    Open,
    /// The token's sha256: comparing fixed-length digests in constant time
    /// leaks neither the token nor its length.
    Token([u8; 32]),
    OAuth {
        oauth: Arc<OAuth>,
        metadata: ResourceMetadata,
    },
}

/// Who a request comes from, once authenticated.
pub enum Caller {
    Anyone,
    TokenHolder,
    Principal(Arc<Principal>),
}

impl Authentication {
    pub fn token(token: &str) -> Self {
        Authentication::Token(digest(token))
    }

    /// For the startup log line.
    pub fn describe(&self) -> String {
        match self {
            Authentication::Open => "no authentication".into(),
            Authentication::Token(_) => "bearer token required".into(),
            Authentication::OAuth { oauth, .. } => format!(
                "OAuth: access tokens from {} for {}",
                oauth.settings.issuer, oauth.settings.resource
            ),
        }
    }

    pub fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        match self {
            Authentication::OAuth { metadata, .. } => Some(metadata),
            _ => None,
        }
    }

    pub fn oauth(&self) -> Option<&OAuth> {
        match self {
            Authentication::OAuth { oauth, .. } => Some(oauth),
            _ => None,
        }
    }

    /// The caller, or the `401` that tells them how to authenticate.
    pub async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Response> {
        let presented = bearer(headers);
        match self {
            Authentication::Open => Ok(Caller::Anyone),
            Authentication::Token(expected) => match presented {
                Some(token) if bool::from(digest(token).ct_eq(expected)) => Ok(Caller::TokenHolder),
                _ => Err(unauthorized(
                    "Bearer realm=\"warden\"",
                    "a valid bearer token is required",
                )),
            },
            Authentication::OAuth { oauth, metadata } => {
                let Some(token) = presented else {
                    return Err(unauthorized(&metadata.challenge(), "an access token is required"));
                };
                match oauth.verify(token).await {
                    Ok(principal) => Ok(Caller::Principal(Arc::new(principal))),
                    Err(why) => {
                        tracing::debug!("access token refused: {why}");
                        Err(unauthorized(&metadata.invalid_token(&why), &why))
                    }
                }
            }
        }
    }
}

/// The token of an `Authorization: Bearer …` header (the scheme is
/// case-insensitive, RFC 7235).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.trim().as_bytes()).into()
}

fn unauthorized(challenge: &str, why: &str) -> Response {
    let mut response = (StatusCode::UNAUTHORIZED, format!("{why}\n")).into_response();
    if let Ok(value) = HeaderValue::from_str(challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
