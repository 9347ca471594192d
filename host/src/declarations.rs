//! What a plugin declares at load, validated once and turned into the MCP
//! shapes clients see. A malformed declaration refuses the whole plugin with
//! an error that names the item and the field.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::naming;
use crate::runtime::bindings::types;

/// A tool as Warden serves it: the MCP declaration plus compiled validators,
/// so a call never re-parses a schema.
pub struct ToolDecl {
    pub tool: Tool,
    pub input: Arc<jsonschema::Validator>,
    pub output: Option<Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for ToolDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDecl")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

/// Validates a plugin's tool list: names, descriptions, schemas, uniqueness.
pub fn tools(declared: Vec<types::Tool>) -> Result<Vec<ToolDecl>> {
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(declared.len());
    for tool in declared {
        let name = tool.name.clone();
        if !seen.insert(name.clone()) {
            bail!("tool {name:?} is declared twice");
        }
        tools.push(tool_decl(tool).with_context(|| format!("tool {name:?}"))?);
    }
    tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
    Ok(tools)
}

fn tool_decl(tool: types::Tool) -> Result<ToolDecl> {
    naming::check_item_name(&tool.name).context("field `name`")?;
    if tool.description.trim().is_empty() {
        bail!("field `description` is empty; clients and models need to know what the tool does");
    }
    let input_schema = object_schema(&tool.input_schema).context("field `input-schema`")?;
    let input = compile(&input_schema).context("field `input-schema`")?;
    let (output_schema, output) = match &tool.output_schema {
        Some(text) => {
            let schema = object_schema(text).context("field `output-schema`")?;
            let validator = compile(&schema).context("field `output-schema`")?;
            (Some(Arc::new(schema)), Some(validator))
        }
        None => (None, None),
    };
    let mut mcp = Tool::new(tool.name, tool.description, Arc::new(input_schema));
    if let Some(title) = tool.title {
        mcp = mcp.with_title(title);
    }
    if let Some(schema) = output_schema {
        mcp = mcp.with_raw_output_schema(schema);
    }
    if let Some(a) = tool.annotations {
        mcp = mcp.with_annotations(ToolAnnotations::from_raw(
            a.title,
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ));
    }
    Ok(ToolDecl {
        tool: mcp,
        input,
        output,
    })
}

/// MCP requires tool schemas to be JSON objects with `"type": "object"`.
fn object_schema(text: &str) -> Result<JsonObject> {
    let value: Value = serde_json::from_str(text).context("is not valid JSON")?;
    let Value::Object(schema) = value else {
        bail!("must be a JSON Schema object, found {}", kind(&value));
    };
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(schema),
        Some(other) => bail!("must have \"type\": \"object\", found \"type\": {other}"),
        None => bail!("must have \"type\": \"object\""),
    }
}

fn compile(schema: &JsonObject) -> Result<Arc<jsonschema::Validator>> {
    let schema = Value::Object(schema.clone());
    jsonschema::validator_for(&schema)
        .map(Arc::new)
        .map_err(|e| anyhow::anyhow!("is not a valid JSON Schema: {e}"))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every way `value` violates `validator`, one line each, with its JSON path.
pub fn violations(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|error| {
            let path = error.instance_path.to_string();
            let at = if path.is_empty() { "(root)".to_string() } else { path };
            format!("{at}: {error}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: &str) -> types::Tool {
        types::Tool {
            name: name.into(),
            title: None,
            description: "does things".into(),
            input_schema: schema.into(),
            output_schema: None,
            annotations: None,
        }
    }

    const OBJECT: &str = r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#;

    #[test]
    fn accepts_a_well_formed_tool_and_sorts() {
        let tools = tools(vec![tool("zeta", OBJECT), tool("alpha", OBJECT)]).unwrap();
        let names: Vec<_> = tools.iter().map(|t| t.tool.name.to_string()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
    }

    #[test]
    fn refuses_malformed_declarations_naming_the_field() {
        let cases = [
            (vec![tool("bad name!", OBJECT)], "field `name`"),
            (
                vec![tool("ok", "[1,2]")],
                "must be a JSON Schema object, found an array",
            ),
            (vec![tool("ok", r#"{"type":"string"}"#)], "\"type\": \"object\""),
            (vec![tool("ok", "{not json")], "is not valid JSON"),
            (
                vec![tool("ok", r#"{"type":"object","minProperties":"x"}"#)],
                "not a valid JSON Schema",
            ),
            (vec![tool("twice", OBJECT), tool("twice", OBJECT)], "declared twice"),
        ];
        for (declared, expected) in cases {
            let err = format!("{:#}", tools(declared).unwrap_err());
            assert!(err.contains(expected), "{err:?} should mention {expected:?}");
        }
        let mut no_description = tool("ok", OBJECT);
        no_description.description = " ".into();
        assert!(format!("{:#}", tools(vec![no_description]).unwrap_err()).contains("description"));
    }

    #[test]
    fn violations_name_each_path() {
        let decl = tools(vec![tool("t", OBJECT)]).unwrap().remove(0);
        let found = violations(&decl.input, &serde_json::json!({"n": "seven"}));
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("/n: "), "{found:?}");
        let found = violations(&decl.input, &serde_json::json!({}));
        assert!(
            found[0].starts_with("(root): ") && found[0].contains("\"n\""),
            "{found:?}"
        );
    }
}
