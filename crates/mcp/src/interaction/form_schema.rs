//! The shape MCP allows an elicitation form's `requestedSchema` (2025-11-25,
//! "restricted to flat objects with primitive properties"): an object whose
//! properties are strings, numbers, integers, booleans or enums of strings —
//! a single choice (`enum`, `oneOf` of `const`/`title`, legacy `enumNames`)
//! or a multiple choice (`type: "array"` whose `items` are such an enum).
//! Nothing nests further, nothing refers elsewhere, and only the keywords
//! the spec names are accepted, so a client renders exactly what was checked.

use serde_json::{Map, Value};

/// Keywords of the form itself.
const FORM_KEYWORDS: [&str; 6] = ["$schema", "type", "title", "description", "properties", "required"];

/// Keywords of a property, by its `type`.
const STRING_KEYWORDS: [&str; 10] = [
    "type",
    "title",
    "description",
    "default",
    "minLength",
    "maxLength",
    "format",
    "enum",
    "enumNames",
    "oneOf",
];
const NUMBER_KEYWORDS: [&str; 6] = ["type", "title", "description", "default", "minimum", "maximum"];
const BOOLEAN_KEYWORDS: [&str; 4] = ["type", "title", "description", "default"];
const ARRAY_KEYWORDS: [&str; 7] = [
    "type",
    "title",
    "description",
    "default",
    "minItems",
    "maxItems",
    "items",
];

/// Refuses a form schema MCP does not allow, saying where and why.
pub fn check(schema: &Value) -> Result<(), String> {
    let form = schema.as_object().ok_or("it is not a JSON object")?;
    only(form, &FORM_KEYWORDS, "the form")?;
    if form.get("type").and_then(Value::as_str) != Some("object") {
        return Err("its `type` must be \"object\"".into());
    }
    let properties = match form.get("properties") {
        Some(Value::Object(properties)) => properties,
        _ => return Err("`properties` must be an object".into()),
    };
    for (name, property) in properties {
        check_property(property).map_err(|why| format!("`properties.{name}`: {why}"))?;
    }
    match form.get("required") {
        None => {}
        Some(Value::Array(names)) => {
            for name in names {
                match name.as_str() {
                    Some(name) if properties.contains_key(name) => {}
                    _ => return Err(format!("`required` names {name}, which is not one of its properties")),
                }
            }
        }
        Some(_) => return Err("`required` must be an array of property names".into()),
    }
    for text in ["title", "description", "$schema"] {
        if form.get(text).is_some_and(|value| !value.is_string()) {
            return Err(format!("`{text}` must be a string"));
        }
    }
    Ok(())
}

fn check_property(property: &Value) -> Result<(), String> {
    let property = property.as_object().ok_or("a property must be a JSON object")?;
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .ok_or("a property needs a `type`: string, number, integer, boolean, or array (of enum values)")?;
    match kind {
        "string" => {
            only(property, &STRING_KEYWORDS, "a string property")?;
            if let Some(values) = property.get("enum") {
                strings(values, "`enum`")?;
            }
            if let Some(names) = property.get("enumNames") {
                strings(names, "`enumNames`")?;
            }
            if let Some(choices) = property.get("oneOf") {
                titled_choices(choices, "`oneOf`")?;
            }
        }
        "number" | "integer" => only(property, &NUMBER_KEYWORDS, "a number property")?,
        "boolean" => only(property, &BOOLEAN_KEYWORDS, "a boolean property")?,
        "array" => {
            only(property, &ARRAY_KEYWORDS, "a multiple-choice property")?;
            let items = property
                .get("items")
                .and_then(Value::as_object)
                .ok_or("a multiple-choice property needs `items`: an enum of strings")?;
            match (items.get("enum"), items.get("anyOf")) {
                (Some(values), None) => {
                    only(items, &["type", "enum"], "`items`")?;
                    if items.get("type").is_some_and(|t| t != "string") {
                        return Err("`items.type` must be \"string\"".into());
                    }
                    strings(values, "`items.enum`")?;
                }
                (None, Some(choices)) => {
                    only(items, &["anyOf"], "`items`")?;
                    titled_choices(choices, "`items.anyOf`")?;
                }
                _ => {
                    return Err("`items` must hold either `enum` (strings) or `anyOf` (of `const` and `title`)".into());
                }
            }
        }
        other => {
            return Err(format!(
                "`type` {other:?} is not allowed; a form's properties are strings, numbers, integers, booleans \
                 or enums — flat, nothing nested"
            ));
        }
    }
    for text in ["title", "description", "format"] {
        if property.get(text).is_some_and(|value| !value.is_string()) {
            return Err(format!("`{text}` must be a string"));
        }
    }
    if let Some(default) = property.get("default")
        && (default.is_object() || (default.is_array() && kind != "array"))
    {
        return Err("`default` must be a plain value".into());
    }
    Ok(())
}

/// Refuses a keyword outside `allowed`.
fn only(object: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), String> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(format!(
            "{what} may not use `{key}` (MCP allows flat forms of primitive properties; allowed here: {})",
            allowed.join(", ")
        )),
        None => Ok(()),
    }
}

fn strings(values: &Value, what: &str) -> Result<(), String> {
    match values.as_array() {
        Some(values) if values.iter().all(Value::is_string) => Ok(()),
        _ => Err(format!("{what} must be an array of strings")),
    }
}

/// `[{ "const": "…", "title": "…" }, …]`.
fn titled_choices(choices: &Value, what: &str) -> Result<(), String> {
    let choices = choices.as_array().ok_or(format!("{what} must be an array"))?;
    for choice in choices {
        let choice = choice
            .as_object()
            .ok_or(format!("each of {what} must be an object of `const` and `title`"))?;
        only(choice, &["const", "title"], what)?;
        if !choice.get("const").is_some_and(Value::is_string) || choice.get("title").is_some_and(|t| !t.is_string()) {
            return Err(format!("each of {what} needs a string `const` (and a string `title`)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_spec_forms_pass() {
        let forms = [
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe", "minLength": 1},
                "age": {"type": "integer", "default": 30, "minimum": 0, "maximum": 150},
                "score": {"type": "number", "default": 95.5},
                "email": {"type": "string", "format": "email"},
                "verified": {"type": "boolean", "default": true},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
                "titled": {"type": "string", "oneOf": [{"const": "v1", "title": "One"}]},
                "multi": {"type": "array", "minItems": 1, "items": {"type": "string", "enum": ["x", "y"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "v1", "title": "One"}]}}
            }, "required": []}),
            json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {}}),
        ];
        for form in forms {
            assert_eq!(check(&form), Ok(()), "{form}");
        }
    }

    #[test]
    fn anything_nested_or_foreign_is_refused_with_where() {
        for (form, why) in [
            (json!([]), "not a JSON object"),
            (json!({"type": "array", "properties": {}}), "must be \"object\""),
            (json!({"type": "object"}), "`properties` must be an object"),
            (
                json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}),
                "`properties.a`: `type` \"object\" is not allowed",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "properties": {}}}}),
                "`properties.a`: a string property may not use `properties`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {}}),
                "the form may not use `$defs`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}}),
                "`items` must hold either",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}}}),
                "`enum` must be an array of strings",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "allOf": []}}}),
                "may not use `allOf`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}),
                "`required` names \"b\"",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "default": {"x": 1}}}}),
                "`default` must be a plain value",
            ),
        ] {
            let error = check(&form).unwrap_err();
            assert!(error.contains(why), "{form}: {error}");
        }
    }
}
