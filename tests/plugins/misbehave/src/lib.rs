//! Tools that misbehave on purpose, one way each, for the host's tests.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::Duration;

/// What `remember` kept: must never be seen by a later call.
static REMEMBERED: Mutex<String> = Mutex::new(String::new());
use warden::plugin::host::{self, LogLevel};
use warden::plugin::types::{CallResult, Content, Error, Tool};

struct Misbehave;

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false })
}

fn tool(name: &str, description: &str, input: Value, output: Option<Value>) -> Tool {
    Tool {
        name: name.to_string(),
        title: None,
        description: description.to_string(),
        input_schema: input.to_string(),
        output_schema: output.map(|schema| schema.to_string()),
        annotations: None,
    }
}

fn text(text: impl Into<String>) -> CallResult {
    CallResult {
        content: vec![Content::Text(text.into())],
        structured_content: None,
        is_error: false,
    }
}

fn arguments(raw: &str) -> Result<Value, Error> {
    serde_json::from_str(raw).map_err(|e| Error::InvalidArguments(format!("arguments are not JSON: {e}")))
}

impl Guest for Misbehave {
    fn list_tools() -> Vec<Tool> {
        vec![
            tool(
                "echo",
                "Returns `text` unchanged, as text and as structured content.",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"],
                    "additionalProperties": false
                }),
                Some(json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"]
                })),
            ),
            tool(
                "fail",
                "Returns the error `failed(\"the tool failed on purpose\")`.",
                no_arguments(),
                None,
            ),
            tool(
                "panic",
                "Panics with the message \"boom\" (the instance traps).",
                no_arguments(),
                None,
            ),
            tool("spin", "Loops forever without calling the host.", no_arguments(), None),
            tool(
                "shout",
                "Prints 10,000 lines to stdout and 100 to stderr, then returns \"shouted\".",
                no_arguments(),
                None,
            ),
            tool(
                "progress",
                "Reports progress 0, 50 and 100 of 100, then returns \"done\".",
                no_arguments(),
                None,
            ),
            tool(
                "log",
                "Logs \"hello from the plugin\" at info, then returns \"logged\".",
                no_arguments(),
                None,
            ),
            tool(
                "wait_cancel",
                "Polls `cancelled()` every 10 ms until it is true, then returns \"cancelled\".",
                no_arguments(),
                None,
            ),
            tool(
                "bad_output",
                "Returns structured content that does not match its own output schema.",
                no_arguments(),
                Some(json!({
                    "type": "object",
                    "properties": { "n": { "type": "integer" } },
                    "required": ["n"]
                })),
            ),
            tool(
                "big",
                "Returns a text of `bytes` 'x' characters.",
                json!({
                    "type": "object",
                    "properties": { "bytes": { "type": "integer", "minimum": 0 } },
                    "required": ["bytes"],
                    "additionalProperties": false
                }),
                None,
            ),
            tool(
                "remember",
                "Keeps `text` in a global and on the heap, then answers what the global held before \
                 (empty in a fresh instance): anything else means state leaked between calls.",
                json!({
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"],
                    "additionalProperties": false
                }),
                None,
            ),
            tool(
                "sleep",
                "Sleeps `ms` milliseconds (through the WASI clock), then returns \"slept\".",
                json!({
                    "type": "object",
                    "properties": { "ms": { "type": "integer", "minimum": 0 } },
                    "required": ["ms"],
                    "additionalProperties": false
                }),
                None,
            ),
        ]
    }

    fn call_tool(name: String, raw: String) -> Result<CallResult, Error> {
        match name.as_str() {
            "echo" => {
                let args = arguments(&raw)?;
                let Some(value) = args.get("text").and_then(Value::as_str) else {
                    return Err(Error::InvalidArguments("`text` must be a string".into()));
                };
                Ok(CallResult {
                    content: vec![Content::Text(value.to_string())],
                    structured_content: Some(json!({ "text": value }).to_string()),
                    is_error: false,
                })
            }
            "fail" => Err(Error::Failed("the tool failed on purpose".into())),
            "panic" => panic!("boom"),
            "spin" => {
                let mut counter = 0u64;
                loop {
                    counter = black_box(counter.wrapping_add(1));
                }
            }
            "shout" => {
                for _ in 0..10_000 {
                    println!("NOISE ON STDOUT");
                }
                for _ in 0..100 {
                    eprintln!("NOISE ON STDERR");
                }
                Ok(text("shouted"))
            }
            "progress" => {
                for step in [0.0, 50.0, 100.0] {
                    host::progress(step, Some(100.0), None);
                }
                Ok(text("done"))
            }
            "log" => {
                host::log(LogLevel::Info, "hello from the plugin");
                Ok(text("logged"))
            }
            "wait_cancel" => {
                while !host::cancelled() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Ok(text("cancelled"))
            }
            "bad_output" => Ok(CallResult {
                content: vec![Content::Text("n is not a number".into())],
                structured_content: Some(json!({ "n": "not a number" }).to_string()),
                is_error: false,
            }),
            "big" => {
                let args = arguments(&raw)?;
                let Some(bytes) = args.get("bytes").and_then(Value::as_u64) else {
                    return Err(Error::InvalidArguments("`bytes` must be a non-negative integer".into()));
                };
                Ok(text("x".repeat(bytes as usize)))
            }
            "remember" => {
                let args = arguments(&raw)?;
                let new = args.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                let mut kept = REMEMBERED.lock().unwrap_or_else(|p| p.into_inner());
                let before = std::mem::replace(&mut *kept, new);
                Ok(text(&before))
            }
            "sleep" => {
                let args = arguments(&raw)?;
                let Some(ms) = args.get("ms").and_then(Value::as_u64) else {
                    return Err(Error::InvalidArguments("`ms` must be a non-negative integer".into()));
                };
                std::thread::sleep(Duration::from_millis(ms));
                Ok(text("slept"))
            }
            _ => Err(Error::NotFound(name)),
        }
    }
}

export!(Misbehave);
