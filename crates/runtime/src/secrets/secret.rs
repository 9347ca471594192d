//! A secret value: it can be used, never printed.

use std::fmt;
use std::sync::Arc;

/// A value read from Warden's environment or a file for a plugin. Its
/// `Debug` and `Display` never show it, so no log line, error message or
/// `{:?}` of a manifest can; `expose` is the one way to the text.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Self(value.into())
    }

    /// The value itself: for the sandbox (the guest's environment and
    /// `wasi:config/store`) and for the redactor that looks for it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(super::REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neither_debug_nor_display_prints_the_value() {
        let secret = Secret::new("sk-live-4f9a1c");
        assert_eq!(format!("{secret:?}"), "Secret([redacted])");
        assert_eq!(format!("{secret}"), "[redacted]");
        assert_eq!(format!("{:#?}", Some(&secret)), "Some(\n    Secret([redacted]),\n)");
        assert_eq!(secret.expose(), "sk-live-4f9a1c");
    }
}
