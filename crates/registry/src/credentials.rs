//! A registry's credentials, found the way container tools find them: the
//! `auths` of a Docker `config.json` (`--registry-config FILE`, else
//! `$REGISTRY_AUTH_FILE`, else `$DOCKER_CONFIG/config.json`, else
//! `~/.docker/config.json`), or `WARDEN_REGISTRY_AUTH=HOST=USER:PASSWORD`.
//! Credentials are never logged; messages name the file and the host only.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use http::HeaderValue;
use serde::Deserialize;

const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
pub const ENV: &str = "WARDEN_REGISTRY_AUTH";

#[derive(Clone)]
pub struct Credentials {
    pub username: String,
    password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({}, <redacted>)", self.username)
    }
}

impl Credentials {
    pub fn basic_header(&self) -> HeaderValue {
        let encoded = BASE64.encode(format!("{}:{}", self.username, self.password));
        let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).expect("base64 is a valid header value");
        value.set_sensitive(true);
        value
    }
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    auths: std::collections::BTreeMap<String, AuthEntry>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(Deserialize)]
struct AuthEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
}

/// The config file to read: the one given, or the first of the usual places
/// that exists.
pub fn config_path(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(given) = given {
        return Some(given.to_path_buf());
    }
    let candidates = [
        std::env::var_os("REGISTRY_AUTH_FILE").map(PathBuf::from),
        std::env::var_os("DOCKER_CONFIG").map(|d| PathBuf::from(d).join("config.json")),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker/config.json")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_file())
}

/// The credentials for `host` (`host[:port]`): from the environment first,
/// then from `config` (required to exist when given explicitly).
pub fn for_host(host: &str, config: Option<&Path>, explicit: bool) -> Result<Option<Credentials>> {
    if let Some(value) = std::env::var_os(ENV) {
        let value = value.to_string_lossy();
        let Some((env_host, pair)) = value.split_once('=') else {
            bail!("{ENV} must be HOST=USER:PASSWORD");
        };
        let Some((username, password)) = pair.split_once(':') else {
            bail!("{ENV} must be HOST=USER:PASSWORD");
        };
        if env_host == host {
            return Ok(Some(Credentials {
                username: username.into(),
                password: password.into(),
            }));
        }
    }
    let Some(path) = config else { return Ok(None) };
    if !explicit && !path.is_file() {
        return Ok(None);
    }
    // Regular files only, never waiting on a FIFO, at most 1 MiB.
    let bytes = warden_runtime::bounded_file::read_named(path, MAX_CONFIG_BYTES, "the registry config")?;
    let file: ConfigFile =
        serde_json::from_slice(&bytes).with_context(|| format!("{} is not a Docker config.json", path.display()))?;
    let entry = file
        .auths
        .iter()
        .find(|(key, _)| key_host(key) == host)
        .map(|(_, entry)| entry);
    let Some(entry) = entry else {
        if let Some(store) = file.creds_store {
            tracing::warn!(
                "{} names the credential helper `{store}`; Warden reads only `auths` entries",
                path.display()
            );
        }
        return Ok(None);
    };
    let at = |what: &str| format!("{}: `auths.{host}`: {what}", path.display());
    if entry.identitytoken.is_some() {
        bail!(
            "{}",
            at("identity tokens are not supported; give `auth` (base64 USER:PASSWORD)")
        );
    }
    let (username, password) = match (&entry.auth, &entry.username, &entry.password) {
        (Some(auth), _, _) => {
            let decoded = BASE64
                .decode(auth.trim())
                .map_err(|_| anyhow::anyhow!("{}", at("`auth` is not base64")))?;
            let decoded = String::from_utf8(decoded).map_err(|_| anyhow::anyhow!("{}", at("`auth` is not text")))?;
            let (u, p) = decoded
                .split_once(':')
                .ok_or_else(|| anyhow::anyhow!("{}", at("`auth` must be base64 of USER:PASSWORD")))?;
            (u.to_string(), p.to_string())
        }
        (None, Some(u), Some(p)) => (u.clone(), p.clone()),
        _ => bail!("{}", at("has neither `auth` nor `username` and `password`")),
    };
    Ok(Some(Credentials { username, password }))
}

/// `https://host:port/v1/` and `host:port` name the same registry.
fn key_host(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auths_entries_are_found_by_host() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            format!(
                r#"{{"auths":{{"127.0.0.1:5000":{{"auth":"{}"}},"https://ghcr.io/v1/":{{"username":"u","password":"p"}}}}}}"#,
                BASE64.encode("alice:s3cret:x")
            ),
        )
        .unwrap();
        let found = for_host("127.0.0.1:5000", Some(&path), true).unwrap().unwrap();
        assert_eq!(
            (found.username.as_str(), found.password.as_str()),
            ("alice", "s3cret:x")
        );
        assert!(!format!("{found:?}").contains("s3cret"));
        assert_eq!(for_host("ghcr.io", Some(&path), true).unwrap().unwrap().username, "u");
        assert!(for_host("other.io", Some(&path), true).unwrap().is_none());
        assert!(for_host("x", Some(&dir.path().join("missing.json")), true).is_err());
        assert!(
            for_host("x", Some(&dir.path().join("missing.json")), false)
                .unwrap()
                .is_none()
        );
    }
}
