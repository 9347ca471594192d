//! A careless plugin: it says the value of an environment variable it was
//! given everywhere it can — as a plugin that logs its configuration would.
//! The host's tests check that what reaches the operator is redacted.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde_json::{Value, json};
use warden::plugin::host::{self, LogLevel};
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct Telltale;

fn tool(name: &str, description: &str) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: description.to_string(),
        input_schema: json!({
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "required": ["name"],
            "additionalProperties": false
        })
        .to_string(),
        output_schema: None,
        annotations: None,
    }
}

/// The variable the arguments name, and its value ("" when it is not set).
fn variable(raw: &str) -> Result<(String, String), Error> {
    let args: Value =
        serde_json::from_str(raw).map_err(|e| Error::InvalidArguments(format!("arguments are not JSON: {e}")))?;
    let Some(name) = args.get("name").and_then(Value::as_str) else {
        return Err(Error::InvalidArguments("`name` must be a string".into()));
    };
    Ok((name.to_string(), std::env::var(name).unwrap_or_default()))
}

impl Guest for Telltale {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "tell",
                "Says `<name> is <value>` through host.log (info), stdout and stderr, then returns the value.",
            ),
            tool(
                "tell_and_crash",
                "Prints `<name> is <value>` to stderr, then panics with the same message.",
            ),
        ]
    }

    fn call_tool(name: String, raw: String) -> Result<CallResult, Error> {
        let (variable, value) = variable(&raw)?;
        let said = format!("{variable} is {value}");
        match name.as_str() {
            "tell" => {
                host::log(LogLevel::Info, &said);
                println!("stdout: {said}");
                eprintln!("stderr: {said}");
                Ok(CallResult {
                    content: vec![Content::Text(value)],
                    structured_content: None,
                    is_error: false,
                })
            }
            "tell_and_crash" => {
                eprintln!("about to crash: {said}");
                panic!("{said}");
            }
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(Telltale);
