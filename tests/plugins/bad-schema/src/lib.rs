//! Declares a tool whose input schema is valid JSON but not an object schema: the host
//! must refuse the plugin.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct BadSchema;

impl Guest for BadSchema {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "listy".to_string(),
            title: None,
            description: "Has the input schema [1,2], which is not an object schema.".to_string(),
            input_schema: "[1,2]".to_string(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "listy" => Ok(CallResult {
                content: vec![Content::Text("listy".to_string())],
                structured_content: None,
                is_error: false,
            }),
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(BadSchema);
