//! The authorization server's signing keys (its JWKS), fetched at start,
//! cached, and fetched again when a token names a key id the cache does not
//! hold (the server rotated its keys) or the copy is an hour old. A client
//! sending made-up key ids gets one refetch per `MIN_REFETCH` at most: the
//! authorization server is never hammered on a client's behalf.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use arc_swap::ArcSwap;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::fetch;

/// Fetch again after this long even if every key id is known.
const MAX_AGE: Duration = Duration::from_secs(3600);
/// At most one refetch in this long, whatever clients send.
const MIN_REFETCH: Duration = Duration::from_secs(5);
/// A key set with more keys than this is refused (a real one has a few).
const MAX_KEYS: usize = 64;

pub struct Key {
    kid: Option<String>,
    /// The algorithm the key is for, when the set says.
    pub alg: Option<Algorithm>,
    pub key: DecodingKey,
}

struct KeySet {
    keys: Vec<Arc<Key>>,
    fetched: Instant,
}

impl KeySet {
    /// The key a token names; a token without `kid` may use the only key.
    fn find(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)).cloned(),
            None if self.keys.len() == 1 => self.keys.first().cloned(),
            None => None,
        }
    }
}

pub struct Jwks {
    url: String,
    current: ArcSwap<KeySet>,
    /// When the last fetch was tried; held while fetching, so concurrent
    /// misses wait for one fetch instead of starting their own.
    last_fetch: tokio::sync::Mutex<Instant>,
}

impl Jwks {
    /// Fetches the set once; an unreachable or empty set is an error.
    pub async fn fetch(url: &str) -> Result<Self> {
        let set = load(url).await?;
        Ok(Self {
            url: url.to_string(),
            current: ArcSwap::from_pointee(set),
            last_fetch: tokio::sync::Mutex::new(Instant::now()),
        })
    }

    /// The key for `kid`, fetching the set again if it is unknown (or the
    /// set is old) and the last fetch was long enough ago.
    pub async fn key(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let set = self.current.load();
        let fresh = set.fetched.elapsed() < MAX_AGE;
        if let Some(key) = set.find(kid)
            && fresh
        {
            return Some(key);
        }
        let mut last = self.last_fetch.lock().await;
        // Another request may have fetched while this one waited.
        let set = self.current.load();
        if let Some(key) = set.find(kid)
            && set.fetched.elapsed() < MAX_AGE
        {
            return Some(key);
        }
        if last.elapsed() >= MIN_REFETCH || !fresh {
            *last = Instant::now();
            match load(&self.url).await {
                Ok(set) => self.current.store(Arc::new(set)),
                Err(error) => tracing::warn!("cannot refresh the authorization server's keys: {error:#}"),
            }
        }
        self.current.load().find(kid)
    }
}

async fn load(url: &str) -> Result<KeySet> {
    let document = fetch::json(url).await?;
    let keys = parse(&document).with_context(|| format!("in the key set at {url}"))?;
    Ok(KeySet {
        keys,
        fetched: Instant::now(),
    })
}

/// The signing keys of a JWKS document; keys for encryption, or of kinds
/// this build cannot verify with, are skipped.
fn parse(document: &Value) -> Result<Vec<Arc<Key>>> {
    let Some(entries) = document.get("keys").and_then(Value::as_array) else {
        bail!("no `keys` array");
    };
    if entries.len() > MAX_KEYS {
        bail!("{} keys; at most {MAX_KEYS} are accepted", entries.len());
    }
    let mut keys = Vec::new();
    for entry in entries {
        if entry.get("use").and_then(Value::as_str).is_some_and(|u| u != "sig") {
            continue;
        }
        let alg = match entry.get("alg").and_then(Value::as_str) {
            Some(alg) => match Algorithm::from_str(alg) {
                Ok(alg) => Some(alg),
                Err(_) => continue,
            },
            None => None,
        };
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        let Ok(key) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        keys.push(Arc::new(Key {
            kid: entry.get("kid").and_then(Value::as_str).map(str::to_string),
            alg,
            key,
        }));
    }
    if keys.is_empty() {
        bail!("no signing key Warden can use");
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // An RSA public key (RFC 7517 appendix A.1's example).
    const N: &str = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw";

    #[test]
    fn signing_keys_are_kept_and_the_rest_skipped() {
        let document = json!({ "keys": [
            { "kty": "RSA", "kid": "a", "alg": "RS256", "use": "sig", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "enc", "use": "enc", "n": N, "e": "AQAB" },
            { "kty": "RSA", "kid": "odd", "alg": "RSA-OAEP", "n": N, "e": "AQAB" },
            { "kty": "weird", "kid": "w" },
        ]});
        let keys = parse(&document).unwrap();
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].kid.as_deref(), Some("a"));
        assert_eq!(keys[0].alg, Some(Algorithm::RS256));
        let set = KeySet {
            keys,
            fetched: Instant::now(),
        };
        assert!(set.find(Some("a")).is_some());
        assert!(set.find(Some("b")).is_none());
        // The only key serves a token without `kid`.
        assert!(set.find(None).is_some());
        assert!(parse(&json!({ "keys": [] })).is_err());
        assert!(parse(&json!({ "nokeys": 1 })).is_err());
    }
}
