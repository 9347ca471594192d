//! `[tools.NAME]` in the operator's manifest: a title and a description to
//! serve for a tool in place of what the plugin declares.
//!
//! A model chooses tools by their descriptions, and a component written by
//! someone else may describe a tool by its signature alone
//! (`list-directory(path: string) -> result<list<string>, string>`). The
//! operator who serves it can say what it does.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::Deserialize;

/// The longest title and description an operator may write: what a client
/// shows in a list, and what a model reads.
pub const MAX_TITLE_BYTES: usize = 256;
pub const MAX_DESCRIPTION_BYTES: usize = 16 << 10;

/// What the manifest serves for one tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolOverride {
    pub title: Option<String>,
    pub description: Option<String>,
}

/// `[tools.NAME]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawToolOverride {
    title: Option<String>,
    description: Option<String>,
}

/// Validates `[tools]`, by the name the plugin declares (checked against
/// its tools when it loads).
pub(crate) fn parse(raw: BTreeMap<String, RawToolOverride>) -> Result<BTreeMap<String, ToolOverride>> {
    let mut tools = BTreeMap::new();
    for (name, raw) in raw {
        let text = |value: Option<String>, key: &str, max: usize| -> Result<Option<String>> {
            let Some(value) = value else { return Ok(None) };
            let trimmed = value.trim();
            if trimmed.is_empty() {
                bail!("`tools.{name}.{key}` is empty; write what the tool does, or remove the line");
            }
            if trimmed.len() > max {
                bail!(
                    "`tools.{name}.{key}` is {} bytes long, more than {max}; shorten it",
                    trimmed.len()
                );
            }
            Ok(Some(trimmed.to_string()))
        };
        let entry = ToolOverride {
            title: text(raw.title, "title", MAX_TITLE_BYTES)?,
            description: text(raw.description, "description", MAX_DESCRIPTION_BYTES)?,
        };
        if entry == ToolOverride::default() {
            bail!("`[tools.{name}]` sets nothing; give it a `title` or a `description`, or remove it");
        }
        tools.insert(name, entry);
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(text: &str) -> Result<BTreeMap<String, ToolOverride>> {
        #[derive(Deserialize)]
        struct Raw {
            tools: BTreeMap<String, RawToolOverride>,
        }
        parse(toml::from_str::<Raw>(text)?.tools)
    }

    #[test]
    fn a_title_and_a_description_are_kept_trimmed() {
        let parsed = tools(
            "[tools.list-directory]\ntitle = \" List a folder \"\ndescription = \"Lists the names in a folder.\\n\"\n",
        )
        .unwrap();
        assert_eq!(
            parsed["list-directory"],
            ToolOverride {
                title: Some("List a folder".into()),
                description: Some("Lists the names in a folder.".into()),
            }
        );
    }

    #[test]
    fn empty_long_or_unknown_entries_name_the_key() {
        for (text, want) in [
            ("[tools.t]\ndescription = \"  \"", "`tools.t.description` is empty"),
            ("[tools.t]\n", "`[tools.t]` sets nothing"),
            ("[tools.t]\nsummary = \"x\"", "summary"),
        ] {
            let err = format!("{:#}", tools(text).unwrap_err());
            assert!(err.contains(want), "{text}: {err}");
        }
        let long = format!("[tools.t]\ntitle = \"{}\"", "x".repeat(MAX_TITLE_BYTES + 1));
        assert!(format!("{:#}", tools(&long).unwrap_err()).contains("`tools.t.title` is 257 bytes long"));
    }
}
