//! Version 2 of the plugin the hot-reload tests replace while it serves:
//! `version` answers "v2", and `added_in_v2` is new (so clients see a change).

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{CallResult, Content, Error, Tool};

const NO_ARGUMENTS: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;
const MILLISECONDS: &str = r#"{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"],"additionalProperties":false}"#;

struct Reload;

fn tool(name: &str, description: &str, input_schema: &str) -> Tool {
    Tool {
        name: name.into(),
        title: None,
        description: description.into(),
        input_schema: input_schema.into(),
        output_schema: None,
        annotations: None,
    }
}

fn text(text: &str) -> CallResult {
    CallResult {
        content: vec![Content::Text(text.into())],
        structured_content: None,
        is_error: false,
    }
}

impl Guest for Reload {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "version",
                "Says which version of the plugin answered: v2.",
                NO_ARGUMENTS,
            ),
            tool(
                "slow_version",
                "Waits `ms` milliseconds, then says which version answered: v2.",
                MILLISECONDS,
            ),
            tool("added_in_v2", "Exists only in version 2.", NO_ARGUMENTS),
        ]
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "version" => Ok(text("v2")),
            "slow_version" => {
                let digits: String = arguments.chars().filter(char::is_ascii_digit).collect();
                std::thread::sleep(std::time::Duration::from_millis(digits.parse().unwrap_or(0)));
                Ok(text("v2"))
            }
            "added_in_v2" => Ok(text("new in v2")),
            other => Err(Error::NotFound(other.into())),
        }
    }
}

export!(Reload);
