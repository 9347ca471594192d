//! JSON Schemas derived with schemars, shaped for Warden: self-contained (subschemas
//! inline, no `$ref` or `$defs`), no `$schema`, and no title or description of the
//! argument struct itself (the tool's doc comment describes the tool).

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use crate::PromptArgument;

fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    })
}

/// The root schema of `T`, without the keys that only name or describe the Rust type.
fn root(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        for key in ["$schema", "title", "description"] {
            map.remove(key);
        }
    }
    drop_integer_formats(&mut value);
    value
}

/// schemars names the Rust integer type in `format` (`uint`, `int64`, …): formats no JSON
/// Schema draft defines, which strict clients may refuse. The bounds say it in `minimum`
/// and `maximum`.
fn drop_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let integer = match map.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
                _ => false,
            };
            if integer {
                map.remove("format");
            }
            map.values_mut().for_each(drop_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_integer_formats),
        _ => {}
    }
}

/// The `inputSchema` of a tool whose arguments are `T`. Optional arguments are not nullable:
/// an argument is given with its type or left out.
pub fn input_schema<T: JsonSchema>() -> String {
    let schema = settings()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = root(schema.to_value());
    optional_not_null(&mut value);
    value.to_string()
}

/// The `inputSchema` of a tool that takes no arguments.
pub fn empty_input_schema() -> String {
    r#"{"type":"object","properties":{},"additionalProperties":false}"#.to_string()
}

/// The `outputSchema` of a tool returning `T`.
pub fn output_schema<T: JsonSchema>() -> Value {
    let schema = settings().for_serialize().into_generator().into_root_schema_for::<T>();
    root(schema.to_value())
}

/// A prompt's arguments, from the properties of `T`: every argument is a string. The required
/// ones come first, each group in the order of their names.
pub fn prompt_arguments<T: JsonSchema>() -> Vec<PromptArgument> {
    let schema = settings()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let value = schema.to_value();
    let required: Vec<&str> = value["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = value["properties"].as_object() else {
        return Vec::new();
    };
    let mut arguments: Vec<PromptArgument> = properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            description: property["description"].as_str().map(str::to_string),
            required: required.contains(&name.as_str()),
        })
        .collect();
    arguments.sort_by_key(|argument| !argument.required);
    arguments
}

/// Rewrites each property that is not required, everywhere in `schema`, so that it no
/// longer admits `null` (schemars makes an `Option<T>` nullable).
fn optional_not_null(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(|n| n.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                strip_null(property);
            }
        }
    }
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(properties)) => properties.values_mut().for_each(optional_not_null),
            ("items" | "additionalProperties", item @ Value::Object(_)) => optional_not_null(item),
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                items.iter_mut().for_each(optional_not_null)
            }
            _ => {}
        }
    }
}

/// `T` from schemars' shapes of `Option<T>`.
fn strip_null(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types[0].clone();
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    if let Some(Value::Array(branches)) = map.get("anyOf")
        && branches.len() == 2
        && let Some(kept) = branches.iter().find(|b| !null(b))
        && branches.iter().any(null)
        && let Value::Object(kept) = kept.clone()
    {
        map.remove("anyOf");
        for (key, value) in kept {
            map.entry(key).or_insert(value);
        }
    }
    let _: &Map<String, Value> = map;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Separator {
        #[serde(rename = "-")]
        Dash,
        #[serde(rename = "_")]
        Underscore,
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        depth: u8,
    }

    /// Not part of the schema.
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// The text.
        text: String,
        /// Longest slug wanted.
        #[schemars(range(min = 1, max = 1000))]
        max_length: Option<u32>,
        separator: Option<Separator>,
        inner: Option<Inner>,
        #[serde(default)]
        flag: bool,
    }

    #[test]
    fn input_schemas_are_inline_objects_with_optional_fields_not_nullable() {
        let schema: Value = serde_json::from_str(&input_schema::<Args>()).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["text"]));
        for key in ["$schema", "title", "description", "$defs"] {
            assert!(schema.get(key).is_none(), "{key} in {schema}");
        }
        assert!(!schema.to_string().contains("$ref"), "{schema}");
        assert!(!schema.to_string().contains("null"), "{schema}");
        let properties = &schema["properties"];
        assert_eq!(
            properties["text"],
            json!({"type": "string", "description": "The text."})
        );
        assert_eq!(properties["max_length"]["type"], "integer");
        assert_eq!(properties["max_length"]["minimum"], 1);
        assert_eq!(properties["max_length"]["maximum"], 1000);
        assert_eq!(properties["max_length"]["description"], "Longest slug wanted.");
        assert!(properties["max_length"].get("format").is_none());
        assert!(properties["inner"]["properties"]["depth"].get("format").is_none());
        assert_eq!(properties["separator"]["enum"], json!(["-", "_"]));
        assert_eq!(properties["separator"]["type"], "string");
        assert_eq!(properties["inner"]["type"], "object");
        assert_eq!(properties["flag"]["type"], "boolean");
    }

    #[test]
    fn no_arguments_is_an_empty_closed_object() {
        let schema: Value = serde_json::from_str(&empty_input_schema()).unwrap();
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }

    #[allow(dead_code)]
    #[derive(Serialize, JsonSchema)]
    struct Out {
        /// Unicode scalar values.
        characters: usize,
        note: Option<String>,
    }

    #[test]
    fn output_schemas_admit_what_serde_writes() {
        let schema = output_schema::<Out>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["characters"]["minimum"], 0);
        // `None` is written as null, so the output schema admits it.
        assert_eq!(schema["properties"]["note"]["type"], json!(["string", "null"]));
    }

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct PromptArgs {
        /// The language.
        language: String,
        focus: Option<String>,
    }

    #[test]
    fn prompt_arguments_come_from_the_fields() {
        let arguments = prompt_arguments::<PromptArgs>();
        assert_eq!(arguments.len(), 2);
        assert_eq!(arguments[0].name, "language");
        assert_eq!(arguments[0].description.as_deref(), Some("The language."));
        assert!(arguments[0].required);
        assert_eq!(arguments[1].name, "focus");
        assert!(!arguments[1].required);
    }
}
