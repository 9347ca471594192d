//! Version 1 of the plugin the hot-reload tests replace while it serves:
//! `version` answers "v1", `slow_version` too after a wait. Version 2
//! (`reload-v2`) answers "v2" and adds a tool.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

const NO_ARGUMENTS: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;
const MILLISECONDS: &str = r#"{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"],"additionalProperties":false}"#;

struct Reload;

impl Guest for Reload {
    fn list_tools() -> Vec<Tool> {
        vec![
            Tool {
                name: "version".into(),
                title: None,
                description: "Says which version of the plugin answered: v1.".into(),
                input_schema: NO_ARGUMENTS.into(),
                output_schema: None,
                annotations: None,
            },
            Tool {
                name: "slow_version".into(),
                title: None,
                description: "Waits `ms` milliseconds, then says which version answered: v1.".into(),
                input_schema: MILLISECONDS.into(),
                output_schema: None,
                annotations: None,
            },
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        let answer = CallResult {
            content: vec![Content::Text("v1".into())],
            structured_content: None,
            is_error: false,
        };
        match name.as_str() {
            "version" => Ok(answer),
            "slow_version" => {
                sleep(&arguments);
                Ok(answer)
            }
            other => Err(Error::NotFound(other.into())),
        }
    }
}

/// Sleeps for the `ms` of `{"ms": N}` (the schema guarantees its shape).
fn sleep(arguments: &str) {
    let digits: String = arguments.chars().filter(char::is_ascii_digit).collect();
    std::thread::sleep(std::time::Duration::from_millis(digits.parse().unwrap_or(0)));
}

export!(Reload);
