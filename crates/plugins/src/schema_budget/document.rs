//! The schema as a JSON document: its text size, value count and nesting,
//! bounded before anything else reads it.

use anyhow::{Result, bail};
use serde_json::Value;

use super::{MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES};

/// Refuses a schema text too long to parse.
pub fn check_text(text: &str) -> Result<()> {
    if text.len() > MAX_SCHEMA_BYTES {
        bail!(
            "is {} bytes, more than the {} KiB a schema may have",
            text.len(),
            MAX_SCHEMA_BYTES >> 10
        );
    }
    Ok(())
}

/// Refuses a JSON document with more values, or deeper nesting, than a
/// schema may have (for JSON a plugin hands over that is not compiled).
pub fn check_document(value: &Value) -> Result<()> {
    let (nodes, depth) = document_size(value);
    if nodes > MAX_SCHEMA_NODES {
        bail!("has {nodes} JSON values, more than the {MAX_SCHEMA_NODES} a schema may have");
    }
    if depth > MAX_SCHEMA_DEPTH {
        bail!("nests {depth} levels deep, more than the {MAX_SCHEMA_DEPTH} a schema may");
    }
    Ok(())
}

/// JSON values in `value` and how deeply they nest.
pub(super) fn document_size(value: &Value) -> (usize, usize) {
    match value {
        Value::Array(items) => items
            .iter()
            .map(document_size)
            .fold((1, 1), |(n, d), (cn, cd)| (n + cn, d.max(cd + 1))),
        Value::Object(map) => map
            .values()
            .map(document_size)
            .fold((1, 1), |(n, d), (cn, cd)| (n + cn, d.max(cd + 1))),
        _ => (1, 1),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_schemas::refused;
    use super::*;

    #[test]
    fn document_size_and_depth_are_bounded() {
        let mut deep = json!({});
        for _ in 0..60 {
            deep = json!({"not": deep});
        }
        assert!(refused(deep).contains("nests"));
        let wide = json!({"type": "object", "enum": vec![0; MAX_SCHEMA_NODES]});
        assert!(refused(wide).contains("JSON values"));
        let text = format!(
            r#"{{"type":"object","description":"{}"}}"#,
            "x".repeat(MAX_SCHEMA_BYTES)
        );
        let error = check_text(&text).unwrap_err();
        assert!(format!("{error:#}").contains("KiB a schema may have"));
    }
}
