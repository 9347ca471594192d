//! The tools of the conformance suites.

use crate::Conformance;
use crate::exports::warden::plugin::tools::Guest;
use crate::media::{PNG, WAV};
use crate::state;
use crate::warden::plugin::host::{self, LogLevel};
use crate::warden::plugin::types::{Blob, CallResult, Content, Error, ResourceBody, ResourceContents, Tool};
use serde_json::{Value, json};
use std::thread::sleep;
use std::time::Duration;

/// Listed while its marker is in `/state` (see `state.rs`).
const DYNAMIC_TOOL: &str = "test_dynamic_tool";
pub const DYNAMIC_PROMPT: &str = "test_dynamic_prompt";

/// The pause between log messages and between progress reports.
const STEP: Duration = Duration::from_millis(50);

/// Tools without arguments, with their descriptions.
const NO_ARGUMENT_TOOLS: [(&str, &str); 10] = [
    ("test_simple_text", "Returns a simple text response."),
    ("test_image_content", "Returns a 1×1 PNG image."),
    ("test_audio_content", "Returns a tiny WAV audio clip."),
    ("test_embedded_resource", "Returns an embedded text resource."),
    (
        "test_multiple_content_types",
        "Returns text, an image and an embedded resource together.",
    ),
    (
        "test_tool_with_logging",
        "Logs three info messages, 50 ms apart, while it runs.",
    ),
    ("test_error_handling", "Always returns an error result (isError: true)."),
    (
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 out of 100, 50 ms apart.",
    ),
    ("test_logging_tool", "Logs one info message and returns."),
    (
        "test_streaming_elicitation",
        "Answers with text and asks the client nothing: its response stream carries no server-to-client requests.",
    ),
];

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

/// The input schema of `json_schema_2020_12_tool`: draft 2020-12 with `$defs`, `$anchor`, a
/// `$ref`, composition (`allOf` holding an `anyOf`) and conditionals (`if`/`then`/`else`): the
/// keywords the suite's `json-schema-2020-12` scenario checks are passed through unchanged.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "address",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contact": { "type": "string", "enum": ["email", "phone"] },
            "email": { "type": "string" },
            "phone": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["name"] }, { "required": ["address"] }] }],
        "if": { "properties": { "contact": { "const": "email" } }, "required": ["contact"] },
        "then": { "required": ["email"] },
        "else": { "not": { "required": ["email"] } },
        "additionalProperties": false
    })
}

fn tool(name: &str, description: &str, input: Value) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: description.to_string(),
        input_schema: input.to_string(),
        output_schema: None,
        annotations: None,
    }
}

fn result(content: Vec<Content>) -> CallResult {
    CallResult {
        content,
        structured_content: None,
        is_error: false,
    }
}

fn text(text: &str) -> Content {
    Content::Text(text.to_string())
}

fn image() -> Content {
    Content::Image(Blob {
        data: PNG.to_vec(),
        mime_type: "image/png".to_string(),
    })
}

fn embedded_text(uri: &str, mime_type: &str, text: &str) -> Content {
    Content::EmbeddedResource(ResourceContents {
        uri: uri.to_string(),
        mime_type: Some(mime_type.to_string()),
        body: ResourceBody::Text(text.to_string()),
    })
}

impl Guest for Conformance {
    fn list_tools() -> Vec<Tool> {
        let mut tools: Vec<Tool> = NO_ARGUMENT_TOOLS
            .iter()
            .map(|(name, description)| tool(name, description, no_arguments()))
            .collect();
        tools.push(tool(
            "test_trigger_tool_change",
            "Adds `test_dynamic_tool` to the tool list, or removes it, and so sends tools/list_changed.",
            no_arguments(),
        ));
        tools.push(tool(
            "test_trigger_prompt_change",
            "Adds `test_dynamic_prompt` to the prompt list, or removes it, and so sends prompts/list_changed.",
            no_arguments(),
        ));
        if state::present(DYNAMIC_TOOL) {
            tools.push(tool(
                DYNAMIC_TOOL,
                "Listed after test_trigger_tool_change.",
                no_arguments(),
            ));
        }
        // SEP-2663's scenarios call `greet` with only the standard headers.
        tools.push(tool(
            "greet",
            "Greets someone by name.",
            json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
                "additionalProperties": false
            }),
        ));
        // SEP-2243: `name` also travels as the `Mcp-Param-Name` header on the 2026 wire, and
        // `http-custom-header-server-validation` (which takes the first tool with an
        // `x-mcp-header` property) checks that Warden holds the two to agreement.
        tools.push(tool(
            "greet_by_header",
            "Greets someone by name; the name is also sent as the Mcp-Param-Name header.",
            json!({
                "type": "object",
                "properties": { "name": { "type": "string", "x-mcp-header": "Name" } },
                "required": ["name"],
                "additionalProperties": false
            }),
        ));
        tools.push(tool(
            "json_schema_2020_12_tool",
            "Echoes its arguments; its input schema uses JSON Schema 2020-12 with $defs and $ref.",
            json_schema_2020_12(),
        ));
        tools
    }

    fn call_tool(name: String, arguments: String) -> Result<CallResult, Error> {
        Ok(match name.as_str() {
            "test_simple_text" => result(vec![text("This is a simple text response for testing.")]),
            "test_image_content" => result(vec![image()]),
            "test_audio_content" => result(vec![Content::Audio(Blob {
                data: WAV.to_vec(),
                mime_type: "audio/wav".to_string(),
            })]),
            "test_embedded_resource" => result(vec![embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]),
            "test_multiple_content_types" => result(vec![
                text("Multiple content types test:"),
                image(),
                embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]),
            "test_tool_with_logging" => {
                host::log(LogLevel::Info, "Tool execution started");
                sleep(STEP);
                host::log(LogLevel::Info, "Tool processing data");
                sleep(STEP);
                host::log(LogLevel::Info, "Tool execution completed");
                result(vec![text("Logging test completed")])
            }
            "test_error_handling" => CallResult {
                is_error: true,
                ..result(vec![text("This tool intentionally returns an error for testing")])
            },
            "test_tool_with_progress" => {
                host::progress(0.0, Some(100.0), None);
                sleep(STEP);
                host::progress(50.0, Some(100.0), None);
                sleep(STEP);
                host::progress(100.0, Some(100.0), None);
                result(vec![text("Progress test completed")])
            }
            "test_trigger_tool_change" => match state::toggle(DYNAMIC_TOOL) {
                Ok(done) => result(vec![text(&format!("{DYNAMIC_TOOL} {done}; the tool list changes"))]),
                Err(why) => return Err(Error::Failed(why)),
            },
            "test_trigger_prompt_change" => match state::toggle(DYNAMIC_PROMPT) {
                Ok(done) => result(vec![text(&format!("{DYNAMIC_PROMPT} {done}; the prompt list changes"))]),
                Err(why) => return Err(Error::Failed(why)),
            },
            DYNAMIC_TOOL => result(vec![text("This tool was added at run time.")]),
            "test_logging_tool" => {
                host::log(LogLevel::Info, "Logging tool executed");
                result(vec![text("Logging tool executed")])
            }
            // 2026 `server-stateless` calls it with the elicitation capability and checks that the
            // response stream holds no independent server-to-client request: a plugin cannot
            // send one, so a plain result is the conforming answer.
            "test_streaming_elicitation" => result(vec![text("Streaming elicitation test completed")]),
            "json_schema_2020_12_tool" => result(vec![Content::Text(format!("Received arguments: {arguments}"))]),
            "greet" | "greet_by_header" => {
                let arguments: Value =
                    serde_json::from_str(&arguments).map_err(|e| Error::InvalidArguments(e.to_string()))?;
                let name = arguments["name"].as_str().unwrap_or_default();
                result(vec![text(&format!("Hello, {name}!"))])
            }
            _ => return Err(Error::NotFound(name)),
        })
    }
}
