//! Declares two tools with the same name: the host must refuse the plugin.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct DupTools;

const SCHEMA: &str = r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#;

fn twice(description: &str) -> Tool {
    Tool {
        name: "twice".to_string(),
        title: None,
        description: description.to_string(),
        input_schema: SCHEMA.to_string(),
        output_schema: None,
        annotations: None,
    }
}

impl Guest for DupTools {
    fn list_tools() -> Vec<Tool> {
        vec![
            twice("The first tool named twice."),
            twice("The second tool named twice."),
        ]
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "twice" => Ok(CallResult {
                content: vec![Content::Text("twice".to_string())],
                structured_content: None,
                is_error: false,
            }),
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(DupTools);
