//! A small, deterministic plugin that implements the whole contract: tools, resources,
//! resource templates, prompts and completions.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/plugin",
});

use exports::warden::plugin::completions::{self, Reference};
use exports::warden::plugin::{prompts, resources, tools};
use serde_json::{Value, json};
use warden::plugin::types::{
    CallResult, Content, Error, Prompt, PromptArgument, PromptMessage, PromptResult, ResourceBody, ResourceContents,
    ResourceInfo, ResourceTemplate, Role, Tool, ToolAnnotations,
};

struct Full;

const README_URI: &str = "mem://readme";
const README_TEXT: &str = "hello resource";
const ITEM_TEMPLATE: &str = "mem://items/{id}";
const ITEM_PREFIX: &str = "mem://items/";
const NAMES: [&str; 2] = ["Alice", "Bob"];
const ITEM_IDS: [&str; 3] = ["1", "2", "42"];

impl tools::Guest for Full {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "add".to_string(),
            title: Some("Add".to_string()),
            description: "Adds two numbers and returns their sum.".to_string(),
            input_schema: json!({
                "type": "object",
                "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                "required": ["a", "b"],
                "additionalProperties": false
            })
            .to_string(),
            output_schema: Some(
                json!({
                    "type": "object",
                    "properties": { "sum": { "type": "number" } },
                    "required": ["sum"],
                    "additionalProperties": false
                })
                .to_string(),
            ),
            annotations: Some(ToolAnnotations {
                title: Some("Add".to_string()),
                read_only_hint: Some(true),
                destructive_hint: Some(false),
                idempotent_hint: Some(true),
                open_world_hint: Some(false),
            }),
        }]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        if name != "add" {
            return Err(Error::NotFound(name));
        }
        let args: Value = serde_json::from_str(&arguments)
            .map_err(|e| Error::InvalidArguments(format!("arguments are not JSON: {e}")))?;
        let number = |key: &str| {
            args.get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| Error::InvalidArguments(format!("`{key}` must be a number")))
        };
        let sum = number("a")? + number("b")?;
        if !sum.is_finite() {
            return Err(Error::InvalidArguments("the sum is too large for a number".into()));
        }
        // Whole sums print without a fraction: 2 + 3 is "5", not "5.0".
        let (text, value) = if sum.fract() == 0.0 && sum.abs() < 9_007_199_254_740_992.0 {
            (format!("{}", sum as i64), json!(sum as i64))
        } else {
            (format!("{sum}"), json!(sum))
        };
        Ok(CallResult {
            content: vec![Content::Text(text)],
            structured_content: Some(json!({ "sum": value }).to_string()),
            is_error: false,
        })
    }
}

impl resources::Guest for Full {
    fn list_resources() -> Vec<ResourceInfo> {
        vec![ResourceInfo {
            uri: README_URI.to_string(),
            name: "readme".to_string(),
            title: Some("Readme".to_string()),
            description: Some("A short text kept in memory.".to_string()),
            mime_type: Some("text/plain".to_string()),
            size: Some(README_TEXT.len() as u64),
        }]
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: ITEM_TEMPLATE.to_string(),
            name: "item".to_string(),
            title: Some("Item".to_string()),
            description: Some("An item by id; reading it returns \"item <id>\".".to_string()),
            mime_type: Some("text/plain".to_string()),
        }]
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        let text = if uri == README_URI {
            README_TEXT.to_string()
        } else {
            match uri.strip_prefix(ITEM_PREFIX) {
                Some(id) if !id.is_empty() && !id.contains('/') => format!("item {id}"),
                _ => return Err(Error::NotFound(uri)),
            }
        };
        Ok(vec![ResourceContents {
            uri,
            mime_type: Some("text/plain".to_string()),
            body: ResourceBody::Text(text),
        }])
    }
}

impl prompts::Guest for Full {
    fn list_prompts() -> Vec<Prompt> {
        vec![Prompt {
            name: "greet".to_string(),
            title: Some("Greet".to_string()),
            description: Some("Greets someone by name.".to_string()),
            arguments: vec![PromptArgument {
                name: "name".to_string(),
                description: Some("Who to greet.".to_string()),
                required: true,
            }],
        }]
    }

    fn get_prompt(name: String, arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        if name != "greet" {
            return Err(Error::NotFound(name));
        }
        let Some((_, who)) = arguments.iter().find(|(key, _)| key == "name") else {
            return Err(Error::InvalidArguments(
                "the greet prompt needs the argument `name`".to_string(),
            ));
        };
        Ok(PromptResult {
            description: Some("A greeting".to_string()),
            messages: vec![PromptMessage {
                role: Role::User,
                content: Content::Text(format!("Hello, {who}!")),
            }],
        })
    }
}

impl completions::Guest for Full {
    /// Case-insensitive prefix match over a fixed list. The argument `bulk`
    /// of the greet prompt offers 150 values, more than one answer may hold.
    fn complete(reference: Reference, argument: String, value: String) -> Vec<String> {
        let candidates: Vec<String> = match (&reference, argument.as_str()) {
            (Reference::Prompt(prompt), "name") if prompt == "greet" => NAMES.map(String::from).to_vec(),
            (Reference::Prompt(prompt), "bulk") if prompt == "greet" => (0..150).map(|i| format!("v{i:03}")).collect(),
            (Reference::ResourceTemplate(template), "id") if template == ITEM_TEMPLATE => {
                ITEM_IDS.map(String::from).to_vec()
            }
            _ => Vec::new(),
        };
        let prefix = value.to_lowercase();
        candidates
            .into_iter()
            .filter(|candidate| candidate.to_lowercase().starts_with(&prefix))
            .collect()
    }
}

export!(Full);
