//! Version 1 of the plugin the hot-reload tests replace while it serves:
//! `version` answers "v1". Version 2 (`reload-v2`) answers "v2" and adds a tool.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

const NO_ARGUMENTS: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;

struct Reload;

impl Guest for Reload {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "version".into(),
            title: None,
            description: "Says which version of the plugin answered: v1.".into(),
            input_schema: NO_ARGUMENTS.into(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "version" => Ok(CallResult {
                content: vec![Content::Text("v1".into())],
                structured_content: None,
                is_error: false,
            }),
            other => Err(Error::NotFound(other.into())),
        }
    }
}

export!(Reload);
