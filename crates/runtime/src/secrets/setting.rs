//! A `[config]` or `[environment]` value as the manifest gave it: written in
//! clear, or read from Warden's environment or a file.

use std::fmt;
use std::path::PathBuf;

use super::Secret;

/// Where a secret was read from: what `warden check` shows instead of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A variable of Warden's own environment (`{ env = "VAR" }`, or
    /// `[environment] pass`).
    Env(String),
    /// A file (`{ file = "/run/secrets/key" }`).
    File(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Env(name) => write!(f, "env {name}"),
            Source::File(path) => write!(f, "file {}", path.display()),
        }
    }
}

/// One value a plugin is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// Written in the manifest in clear: not a secret (anyone who can read
    /// the manifest can read it), though `warden check` does not print it.
    Plain(String),
    /// Read when the plugin loaded.
    Secret { value: Secret, from: Source },
}

impl Setting {
    /// The text the plugin gets.
    pub fn value(&self) -> &str {
        match self {
            Setting::Plain(text) => text,
            Setting::Secret { value, .. } => value.expose(),
        }
    }

    /// The value, when it is a secret.
    pub fn secret(&self) -> Option<&Secret> {
        match self {
            Setting::Plain(_) => None,
            Setting::Secret { value, .. } => Some(value),
        }
    }

    /// How `warden check` and `warden inspect` list it under `key`: the key
    /// alone for a value written in clear, `key = <from env VAR>` or
    /// `key = <from file PATH>` for a secret. Never the value.
    pub fn shown(&self, key: &str) -> String {
        match self {
            Setting::Plain(_) => key.to_string(),
            Setting::Secret { from, .. } => format!("{key} = <from {from}>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_shown_by_where_it_came_from() {
        let from_env = Setting::Secret {
            value: Secret::new("sk-live-4f9a1c"),
            from: Source::Env("WARDEN_API_KEY".into()),
        };
        let from_file = Setting::Secret {
            value: Secret::new("sk-live-4f9a1c"),
            from: Source::File("/run/secrets/key".into()),
        };
        assert_eq!(from_env.shown("api-key"), "api-key = <from env WARDEN_API_KEY>");
        assert_eq!(from_file.shown("api-key"), "api-key = <from file /run/secrets/key>");
        assert_eq!(
            Setting::Plain("https://example.com".into()).shown("api-base"),
            "api-base"
        );
        assert_eq!(from_env.value(), "sk-live-4f9a1c");
        let debug = format!("{from_env:?} {from_file:?}");
        assert!(!debug.contains("sk-live"), "{debug}");
        assert!(
            debug.contains("WARDEN_API_KEY") && debug.contains("/run/secrets/key"),
            "{debug}"
        );
    }
}
