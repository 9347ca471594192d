//! Built against `warden:plugin@9.0.0` (its own copy of the WIT in `wit/`, identical
//! apart from the version): a host that knows only 0.1.0 must refuse it. It imports
//! `warden:plugin/host@9.0.0` (the `hello` tool logs) and exports `tools@9.0.0`, as a real
//! plugin built against a newer contract would.

wit_bindgen::generate!({
    path: "wit",
    world: "warden:plugin/tool-plugin@9.0.0",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::host::{self, LogLevel};
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct FutureAbi;

impl Guest for FutureAbi {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "hello".to_string(),
            title: None,
            description: "Returns \"hello\".".to_string(),
            input_schema: r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#.to_string(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "hello" => {
                host::log(LogLevel::Info, "hello from the future");
                Ok(CallResult {
                    content: vec![Content::Text("hello".to_string())],
                    structured_content: None,
                    is_error: false,
                })
            }
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(FutureAbi);
