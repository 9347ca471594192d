//! `x-mcp-header` annotations in a tool's input schema (SEP-2243): a
//! property so marked is also sent by 2026-07-28 HTTP clients as an
//! `Mcp-Param-<Name>` header, which rmcp's HTTP service checks against the
//! body (`WardenServer::get_tool` gives it the schema). The official clients
//! drop a tool whose annotations break the rules below, so a plugin
//! declaring one is refused at load, naming the property, rather than
//! served to clients that cannot call it.

use anyhow::{Result, bail};
use rmcp::model::JsonObject;
use serde_json::Value;

const KEYWORD: &str = "x-mcp-header";

/// Checks every annotation of `schema` (an input schema's root): each sits
/// on a property reached from the root through `properties` alone, of type
/// `string`, `integer` or `boolean`, and names a distinct HTTP token.
pub fn check(schema: &JsonObject) -> Result<()> {
    if schema.contains_key(KEYWORD) {
        bail!("`{KEYWORD}` must mark a property, not the schema itself");
    }
    if let Some(place) = off_chain(schema, true, "") {
        bail!("`{KEYWORD}` at {place} does not mark a property reached from the root through `properties` alone");
    }
    let mut seen: Vec<String> = Vec::new();
    let mut annotated = Vec::new();
    collect(schema.get("properties"), &mut Vec::new(), &mut annotated);
    for (path, property) in annotated {
        let path = path.join(".");
        let Some(Value::String(header)) = property.get(KEYWORD) else {
            bail!("property `{path}`: `{KEYWORD}` must be a string (the header's name)");
        };
        if header.is_empty() || !header.chars().all(is_token_char) {
            bail!(
                "property `{path}`: `{KEYWORD}` {header:?} is not an HTTP header name \
                 (letters, digits and !#$%&'*+-.^_`|~)"
            );
        }
        let folded = header.to_ascii_lowercase();
        if seen.contains(&folded) {
            bail!("property `{path}`: `{KEYWORD}` {header:?} names the same header as another property");
        }
        seen.push(folded);
        match property.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            _ => bail!("property `{path}`: `{KEYWORD}` needs `\"type\"` to be \"string\", \"integer\" or \"boolean\""),
        }
    }
    Ok(())
}

/// Whether `schema` has the keyword anywhere, even where it would be data
/// (a `default`, an `enum`): a superset of what any reader counts as an
/// annotation.
pub fn mentioned(schema: &JsonObject) -> bool {
    fn anywhere(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.contains_key(KEYWORD) || map.values().any(anywhere),
            Value::Array(items) => items.iter().any(anywhere),
            _ => false,
        }
    }
    schema.contains_key(KEYWORD) || schema.values().any(anywhere)
}

/// Each annotated property along `properties` chains, with its path.
fn collect<'a>(properties: Option<&'a Value>, path: &mut Vec<&'a str>, out: &mut Vec<(Vec<&'a str>, &'a JsonObject)>) {
    let Some(Value::Object(properties)) = properties else {
        return;
    };
    for (name, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(name);
        if property.contains_key(KEYWORD) {
            out.push((path.clone(), property));
        }
        collect(property.get("properties"), path, out);
        path.pop();
    }
}

/// Where an annotation sits off the `properties` chain, if anywhere:
/// `on_chain` says whether `schema` is the root or a property reached from
/// it through `properties` keys alone.
fn off_chain(schema: &JsonObject, on_chain: bool, at: &str) -> Option<String> {
    for (key, value) in schema {
        let here = format!("{at}/{key}");
        let found = match key.as_str() {
            KEYWORD => (!on_chain).then(|| at.to_string()),
            "properties" => in_map(value, on_chain, &here),
            // Instance data or property names, not schemas.
            "default" | "const" | "enum" | "examples" | "dependentRequired" => None,
            _ => in_subschemas(value, &here),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn in_map(map: &Value, on_chain: bool, at: &str) -> Option<String> {
    let Value::Object(map) = map else {
        return None;
    };
    map.iter().find_map(|(name, schema)| match schema {
        Value::Object(schema) => off_chain(schema, on_chain, &format!("{at}/{name}")),
        _ => None,
    })
}

fn in_subschemas(value: &Value, at: &str) -> Option<String> {
    match value {
        Value::Object(schema) => off_chain(schema, false, at),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(index, item)| in_subschemas(item, &format!("{at}/{index}"))),
        _ => None,
    }
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mentioned_anywhere_even_as_data() {
        let plain = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(!mentioned(plain.as_object().unwrap()));
        let annotated = json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}});
        assert!(mentioned(annotated.as_object().unwrap()));
        let data = json!({"type": "object", "properties": {"a": {"default": [{"x-mcp-header": "not a schema"}]}}});
        assert!(mentioned(data.as_object().unwrap()));
    }

    fn checked(schema: Value) -> Result<()> {
        check(schema.as_object().unwrap())
    }

    #[test]
    fn well_formed_annotations_pass() {
        checked(json!({"type": "object", "properties": {
            "name": {"type": "string", "x-mcp-header": "Name"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "place": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
            "plain": {"type": "string", "default": {"x-mcp-header": "data, not a schema"}}
        }}))
        .unwrap();
        checked(json!({"type": "object"})).unwrap();
    }

    #[test]
    fn each_broken_rule_is_named() {
        for (schema, says) in [
            (
                json!({"type": "object", "x-mcp-header": "Root"}),
                "not the schema itself",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
                "/properties/a/items",
            ),
            (
                json!({"type": "object", "$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}),
                "/$defs/a",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "property `a`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
                "not an HTTP header name",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 5}}}),
                "must be a string",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "x-mcp-header": "A"}}}),
                "needs `\"type\"`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Same"}, "b": {"type": "string", "x-mcp-header": "same"}}}),
                "the same header",
            ),
        ] {
            let error = checked(schema.clone()).unwrap_err().to_string();
            assert!(error.contains(says), "{schema}: {error}");
        }
    }
}
