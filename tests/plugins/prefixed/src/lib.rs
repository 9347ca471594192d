//! Tools named after the `TOOL_PREFIX` environment variable its manifest
//! sets (`[environment] set = { TOOL_PREFIX = "p1" }` gives `p1_echo`), so
//! the benchmarks can load many copies without a tool-name clash.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct Prefixed;

fn prefix() -> String {
    std::env::var("TOOL_PREFIX").unwrap_or_else(|_| "prefixed".into())
}

impl Guest for Prefixed {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: format!("{}_echo", prefix()),
            title: None,
            description: "Returns its arguments, as JSON text.".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn call_tool(_name: String, arguments: String) -> Result<CallResult, Error> {
        Ok(CallResult {
            content: vec![Content::Text(arguments)],
            structured_content: None,
            is_error: false,
        })
    }
}

export!(Prefixed);
