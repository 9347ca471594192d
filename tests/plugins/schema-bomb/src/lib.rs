//! Declares what its manifest names in the `BOMB` environment variable: one
//! schema or declaration meant to exhaust the host that loads it. Without
//! `BOMB` it declares tools whose schemas are large but allowed, to be
//! evaluated against large arguments and results.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/plugin",
});

use exports::warden::plugin::completions::{self, Reference};
use exports::warden::plugin::{prompts, resources, tools};
use serde_json::{Map, Value, json};
use warden::plugin::types::{
    CallResult, Content, Error, Prompt, PromptResult, ResourceBody, ResourceContents, ResourceInfo, ResourceTemplate,
    Tool,
};

struct Bomb;

fn bomb() -> String {
    std::env::var("BOMB").unwrap_or_default()
}

fn tool(name: &str, input: Value, output: Option<Value>) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: format!("Schema attack `{name}`."),
        input_schema: input.to_string(),
        output_schema: output.map(|o| o.to_string()),
        annotations: None,
    }
}

/// `depth` levels of `allOf: [$ref, $ref]` to the level below: 2^depth
/// evaluations of the bottom schema for one value.
fn nested_ref_all_of(depth: usize) -> Value {
    let mut defs = Map::new();
    defs.insert("d0".into(), json!({ "type": "object" }));
    for level in 1..=depth {
        let below = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({ "allOf": [{ "$ref": below }, { "$ref": below }] }),
        );
    }
    json!({ "type": "object", "$defs": defs, "$ref": format!("#/$defs/d{depth}") })
}

/// An array schema whose every item is checked against `alternatives`
/// enums of 60 numbers each (none of which an argument of negative numbers
/// matches, so every alternative is tried in full).
fn enum_items(alternatives: usize) -> Value {
    let any_of: Vec<Value> = (0..alternatives)
        .map(|a| json!({ "enum": (0..60).map(|i| a * 60 + i).collect::<Vec<_>>() }))
        .collect();
    json!({ "type": "array", "items": { "anyOf": any_of } })
}

/// 8 levels of 10 000-character property names above 110 × 100 empty properties:
/// 212 KB within every bound on size and work, but jsonschema would keep each of the
/// 11 000 schemas' 80 KB location (942 MB).
fn long_locations() -> Value {
    let group = |g: usize| {
        let leaves: Map<String, Value> = (0..100).map(|n| (format!("p{n}"), json!({}))).collect();
        (format!("g{g}"), json!({ "properties": leaves }))
    };
    let mut schema = json!({ "properties": (0..110).map(group).collect::<Map<String, Value>>() });
    for level in 0..8 {
        schema = json!({ "properties": { format!("{level}{}", "k".repeat(10_000)): schema } });
    }
    schema["type"] = json!("object");
    schema
}

/// Tools whose schemas cost as much as Warden allows for one value: 31
/// alternatives of 60-value enums (32 would be refused).
fn at_limit() -> Vec<Tool> {
    let mut items = enum_items(31);
    items["items"]["anyOf"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "type": "integer", "minimum": -1 }));
    vec![
        tool(
            "at_limit",
            json!({
                "type": "object",
                "properties": {
                    "items": items,
                    // Catastrophic for a backtracking engine.
                    "word": { "type": "string", "pattern": "^(a+)+$" }
                }
            }),
            None,
        ),
        tool(
            "at_limit_output",
            json!({ "type": "object", "properties": { "count": { "type": "integer", "minimum": 0 } } }),
            Some(json!({ "type": "object", "properties": { "items": items } })),
        ),
    ]
}

impl tools::Guest for Bomb {
    fn list_tools() -> Vec<Tool> {
        let object = json!({ "type": "object" });
        match bomb().as_str() {
            "nested-ref" => vec![tool("nested_ref", nested_ref_all_of(40), None)],
            "output-nested-ref" => vec![tool("output_nested_ref", object, Some(nested_ref_all_of(40)))],
            "ref-cycle" => vec![tool(
                "ref_cycle",
                json!({
                    "type": "object",
                    "$defs": { "a": { "allOf": [{ "$ref": "#/$defs/b" }] }, "b": { "anyOf": [{ "$ref": "#/$defs/a" }] } },
                    "$ref": "#/$defs/a"
                }),
                None,
            )],
            "recursive" => vec![tool(
                "recursive",
                json!({
                    "type": "object",
                    "properties": { "left": { "$ref": "#" }, "right": { "$ref": "#" } }
                }),
                None,
            )],
            "backtracking-regex" => vec![tool(
                "backtracking_regex",
                json!({ "type": "object", "properties": { "s": { "type": "string", "pattern": "^(a|aa)+(?=b)" } } }),
                None,
            )],
            "remote-ref" => {
                let url = std::env::var("REMOTE").unwrap_or_default();
                vec![tool(
                    "remote_ref",
                    json!({ "type": "object", "properties": { "s": { "$ref": url } } }),
                    None,
                )]
            }
            "unevaluated" => vec![tool(
                "unevaluated",
                json!({ "type": "object", "allOf": [{ "properties": { "a": {} } }], "unevaluatedProperties": false }),
                None,
            )],
            "wide-enum-items" => vec![tool(
                "wide_enum_items",
                json!({ "type": "object", "properties": { "items": enum_items(40) } }),
                None,
            )],
            "long-locations" => vec![tool("long_locations", long_locations(), None)],
            "huge-schema" => vec![tool(
                "huge_schema",
                json!({ "type": "object", "description": "x".repeat(300 << 10) }),
                None,
            )],
            "many-tools" => (0..1001)
                .map(|n| tool(&format!("t{n}"), object.clone(), None))
                .collect(),
            _ => at_limit(),
        }
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        let arguments: Value = serde_json::from_str(&arguments).map_err(|e| Error::InvalidArguments(e.to_string()))?;
        match name.as_str() {
            "at_limit" => {
                let items = arguments["items"].as_array().map_or(0, Vec::len);
                Ok(CallResult {
                    content: vec![Content::Text(format!("checked {items} items"))],
                    structured_content: None,
                    is_error: false,
                })
            }
            "at_limit_output" => {
                let count = arguments["count"].as_u64().unwrap_or(0) as usize;
                let structured = json!({ "items": vec![-1; count] });
                Ok(CallResult {
                    content: vec![Content::Text(format!("returned {count} items"))],
                    structured_content: Some(structured.to_string()),
                    is_error: false,
                })
            }
            _ => Err(Error::NotFound(name)),
        }
    }
}

fn resource(uri: String, description: Option<String>) -> ResourceInfo {
    ResourceInfo {
        uri,
        name: "bomb".into(),
        title: None,
        description,
        mime_type: None,
        size: None,
    }
}

impl resources::Guest for Bomb {
    fn list_resources() -> Vec<ResourceInfo> {
        match bomb().as_str() {
            "many-resources" => (0..10_001).map(|n| resource(format!("bomb://r/{n}"), None)).collect(),
            "huge-declarations" => (0..9)
                .map(|n| resource(format!("bomb://r/{n}"), Some("d".repeat(1 << 20))))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        match bomb().as_str() {
            "long-template" => vec![ResourceTemplate {
                uri_template: format!("bomb://{}{{x}}", "{a}x".repeat(400)),
                name: "bomb".into(),
                title: None,
                description: None,
                mime_type: None,
            }],
            _ => Vec::new(),
        }
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        Ok(vec![ResourceContents {
            uri,
            mime_type: None,
            body: ResourceBody::Text("bomb".into()),
        }])
    }
}

impl prompts::Guest for Bomb {
    fn list_prompts() -> Vec<Prompt> {
        Vec::new()
    }

    fn get_prompt(name: String, _arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        Err(Error::NotFound(name))
    }
}

impl completions::Guest for Bomb {
    fn complete(_reference: Reference, _argument: String, _value: String) -> Vec<String> {
        Vec::new()
    }
}

export!(Bomb);
