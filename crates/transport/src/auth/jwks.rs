//! The authorization server's signing keys (its JWKS), fetched at start,
//! cached, and fetched again when a token names a key id the cache does not
//! hold (the server rotated its keys) or the copy is an hour old. A client
//! sending made-up key ids gets one refetch per `MIN_REFETCH` at most: the
//! authorization server is never hammered on a client's behalf. A request
//! whose key is cached never waits for the authorization server: an old copy
//! is refreshed in the background while the cached keys keep serving.

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
    /// When the set is `MAX_AGE` old.
    stale_at: Instant,
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
    url: Arc<str>,
    current: Arc<ArcSwap<KeySet>>,
    /// The earliest the next fetch may start (`MIN_REFETCH` after the last
    /// started); held while fetching, so there is one fetch at a time.
    next_fetch: Arc<tokio::sync::Mutex<Instant>>,
}

impl Jwks {
    /// Fetches the set once; an unreachable or empty set is an error.
    pub async fn fetch(url: &str) -> Result<Self> {
        let set = load(url).await?;
        Ok(Self {
            url: Arc::from(url),
            current: Arc::new(ArcSwap::from_pointee(set)),
            next_fetch: Arc::new(tokio::sync::Mutex::new(Instant::now() + MIN_REFETCH)),
        })
    }

    /// The key for `kid`. A cached key is returned at once (an old set is
    /// refreshed in the background meanwhile); an unknown one waits for one
    /// refetch, if the last was at least `MIN_REFETCH` ago.
    pub async fn key(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let set = self.current.load();
        if let Some(key) = set.find(kid) {
            if Instant::now() >= set.stale_at {
                self.refresh_in_background();
            }
            return Some(key);
        }
        // Nothing cached can verify this token: wait for a refetch (or for
        // the one already running).
        let mut next = self.next_fetch.lock().await;
        if let Some(key) = self.current.load().find(kid) {
            // Another request's fetch brought it while this one waited.
            return Some(key);
        }
        if Instant::now() >= *next {
            *next = Instant::now() + MIN_REFETCH;
            refresh(&self.url, &self.current).await;
        }
        self.current.load().find(kid)
    }

    /// Starts a refetch unless one is running or the last was less than
    /// `MIN_REFETCH` ago; never waits for it.
    fn refresh_in_background(&self) {
        let Ok(mut next) = self.next_fetch.clone().try_lock_owned() else {
            return;
        };
        if Instant::now() < *next {
            return;
        }
        *next = Instant::now() + MIN_REFETCH;
        let (url, current) = (self.url.clone(), self.current.clone());
        tokio::spawn(async move {
            refresh(&url, &current).await;
            drop(next);
        });
    }
}

/// Fetches the set again into `current`; a failure keeps the set in force.
async fn refresh(url: &str, current: &ArcSwap<KeySet>) {
    match load(url).await {
        Ok(set) => current.store(Arc::new(set)),
        Err(error) => tracing::warn!("cannot refresh the authorization server's keys: {error:#}"),
    }
}

async fn load(url: &str) -> Result<KeySet> {
    let document = fetch::json(url).await?;
    let keys = parse(&document).with_context(|| format!("in the key set at {url}"))?;
    Ok(KeySet {
        keys,
        stale_at: Instant::now() + MAX_AGE,
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

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
            stale_at: Instant::now() + MAX_AGE,
        };
        assert!(set.find(Some("a")).is_some());
        assert!(set.find(Some("b")).is_none());
        // The only key serves a token without `kid`.
        assert!(set.find(None).is_some());
        assert!(parse(&json!({ "keys": [] })).is_err());
        assert!(parse(&json!({ "nokeys": 1 })).is_err());
    }

    /// A JWKS server on 127.0.0.1 that answers its first request at once and
    /// every later one after `delay`; counts the requests it got.
    async fn slow_jwks(delay: Duration) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let earlier = counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buffer = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buffer).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buffer[..n]),
                        }
                    }
                    if earlier > 0 {
                        tokio::time::sleep(delay).await;
                    }
                    let body = json!({ "keys": [{ "kty": "RSA", "kid": "a", "alg": "RS256", "n": N, "e": "AQAB" }] })
                        .to_string();
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                         connection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        (url, requests)
    }

    async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < deadline, "{what} did not happen within 20 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_cached_key_never_waits_for_a_slow_refresh_and_refetches_keep_their_interval() {
        const SLOW: Duration = Duration::from_secs(2);
        let (url, requests) = slow_jwks(SLOW).await;
        let jwks = Jwks::fetch(&url).await.unwrap();
        assert_eq!(requests.load(Ordering::SeqCst), 1);

        // The copy is an hour old, and the last fetch long past.
        let keys = jwks.current.load().keys.clone();
        jwks.current.store(Arc::new(KeySet {
            keys,
            stale_at: Instant::now(),
        }));
        *jwks.next_fetch.lock().await = Instant::now();

        // Requests naming the cached key are answered while the (slow)
        // refresh runs: none waits for the authorization server.
        let started = Instant::now();
        for _ in 0..100 {
            assert!(jwks.key(Some("a")).await.is_some());
        }
        let waited = started.elapsed();
        assert!(waited < SLOW / 2, "100 lookups of a cached key took {waited:?}");
        eventually("the background refresh's request", || {
            requests.load(Ordering::SeqCst) == 2
        })
        .await;
        eventually("the refresh", || Instant::now() < jwks.current.load().stale_at).await;
        assert_eq!(requests.load(Ordering::SeqCst), 2, "one refresh for 100 lookups");

        // Right after it, an unknown key id is within the minimum interval:
        // refused at once, with no fetch.
        let started = Instant::now();
        assert!(jwks.key(Some("made-up")).await.is_none());
        assert!(started.elapsed() < SLOW / 2);
        assert_eq!(requests.load(Ordering::SeqCst), 2);

        // An old copy within the minimum interval is not refetched either.
        let keys = jwks.current.load().keys.clone();
        jwks.current.store(Arc::new(KeySet {
            keys,
            stale_at: Instant::now(),
        }));
        assert!(jwks.key(Some("a")).await.is_some());
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            requests.load(Ordering::SeqCst),
            2,
            "MIN_REFETCH holds for old copies too"
        );
    }
}
