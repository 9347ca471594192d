//! An address that may carry credentials — `redis://:PASSWORD@host`,
//! `https://user:token@registry` — and the one rule for it: the credentials
//! reach the connection, and nothing Warden prints. `Display` and `Debug`
//! write the address with its user information as `…` and its query (where
//! some clients put a password) as `?…`; only `expose` hands out the whole.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct SecretAddress(String);

impl SecretAddress {
    pub fn new(address: impl Into<String>) -> Self {
        Self(address.into())
    }

    /// The address with its credentials, for the client that connects.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What may be printed: `scheme://…@host:port/path?…`.
    pub fn redacted(&self) -> String {
        let address = &self.0;
        let (scheme, rest) = match address.split_once("://") {
            Some((scheme, rest)) => (Some(scheme), rest),
            // No scheme, no `@`, no `:`: not an address at all — a password
            // typed where the address goes. Shown as nothing of it.
            None if !address.contains(['@', ':', '/']) => return "…".to_string(),
            None => (None, address.as_str()),
        };
        // Everything before the last `@` is user information, even where a
        // password holds an unencoded `/`, `@`, `?` or `#` (better to hide
        // a host whose query has an `@` than to show part of a password).
        let (user, rest) = match rest.rfind('@') {
            Some(at) => ("…@", &rest[at + 1..]),
            None => ("", rest),
        };
        // No `@`, but `host:` followed by something other than a port: an
        // operator who typed only `:PASSWORD`. Hide it.
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if user.is_empty()
            && let Some(colon) = authority.rfind(':')
            && !authority.ends_with(']')
            && !authority[colon + 1..].bytes().all(|b| b.is_ascii_digit())
        {
            return match scheme {
                Some(scheme) => format!("{scheme}://{}:…", &authority[..colon]),
                None => format!("{}:…", &authority[..colon]),
            };
        }
        let (host, tail) = match rest.find(['?', '#']) {
            Some(query) => (&rest[..query], "?…"),
            None => (rest, ""),
        };
        let host = format!("{user}{host}");
        match scheme {
            Some(scheme) => format!("{scheme}://{host}{tail}"),
            None => format!("{host}{tail}"),
        }
    }
}

impl fmt::Display for SecretAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for SecretAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretAddress({:?})", self.redacted())
    }
}

impl std::str::FromStr for SecretAddress {
    type Err = std::convert::Infallible;

    fn from_str(address: &str) -> Result<Self, Self::Err> {
        Ok(Self::new(address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_print() {
        for (address, shown) in [
            ("redis://:hunter2@127.0.0.1:6379/0", "redis://…@127.0.0.1:6379/0"),
            (
                "rediss://warden:hunter2@redis.example:6380",
                "rediss://…@redis.example:6380",
            ),
            ("redis://127.0.0.1:6379?password=hunter2", "redis://127.0.0.1:6379?…"),
            (
                "https://user:p%40ss@reg.example/v2/?token=hunter2#x",
                "https://…@reg.example/v2/?…",
            ),
            ("redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/1"),
            ("user:hunter2@host", "…@host"),
            ("redis://user:hun/ter2@host:6379/0", "redis://…@host:6379/0"),
            ("redis://user:hun@ter2@host", "redis://…@host"),
            ("redis://user:hunter2#frag@host", "redis://…@host"),
            ("redis://user:hunter2?x@host/0?db=1", "redis://…@host/0?…"),
            ("redis://:hunter2", "redis://:…"),
            ("redis://host:hunter2/0", "redis://host:…"),
            ("redis://[::1]:6379/0", "redis://[::1]:6379/0"),
            ("hunter2", "…"),
        ] {
            let secret = SecretAddress::new(address);
            assert_eq!(secret.to_string(), shown);
            assert!(!format!("{secret:?}").contains("hunter2"), "{secret:?}");
            assert!(!format!("{secret:#}").contains("hunter2"));
            assert_eq!(secret.expose(), address);
        }
    }
}
