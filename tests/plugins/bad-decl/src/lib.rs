//! Declares one valid tool and one with an invalid name: the host must refuse the plugin.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct BadDecl;

const SCHEMA: &str = r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#;

fn tool(name: &str) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: "Returns \"fine\".".to_string(),
        input_schema: SCHEMA.to_string(),
        output_schema: None,
        annotations: None,
    }
}

impl Guest for BadDecl {
    fn list_tools() -> Vec<Tool> {
        vec![tool("fine"), tool("bad name!")]
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "fine" | "bad name!" => Ok(CallResult {
                content: vec![Content::Text("fine".to_string())],
                structured_content: None,
                is_error: false,
            }),
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(BadDecl);
