//! Naming rules for what clients see (DESIGN.md §7).
//!
//! Tool and prompt names must suit the strictest common client rule, and a
//! plugin's exposed names never depend on which other plugins are loaded.

use anyhow::{Result, bail};

/// The longest name strict clients accept.
pub const MAX_NAME_LEN: usize = 64;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `^[A-Za-z0-9_-]{1,64}$`: the exposed name of a tool or prompt.
pub fn check_item_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN || !name.chars().all(is_name_char) {
        bail!("{name:?} must be 1 to {MAX_NAME_LEN} characters from A-Z, a-z, 0-9, `_` and `-`");
    }
    Ok(())
}

/// Plugin names appear in logs, audit lines and error messages; they follow
/// the same character rule as tool names.
pub fn check_plugin_name(name: &str) -> Result<()> {
    check_item_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_strict_client_names() {
        for ok in ["a", "text_stats", "date-add", "X9", &"n".repeat(64)] {
            check_item_name(ok).unwrap();
        }
    }

    #[test]
    fn rejects_everything_else() {
        for bad in ["", "bad name!", "dotted.name", "ünïcode", &"n".repeat(65), "slash/y"] {
            assert!(check_item_name(bad).is_err(), "{bad:?}");
        }
    }
}
