//! An interactive plugin (`warden:plugin@0.2.0`, `wit/v0.2.0`) that asks the client for input
//! the host must refuse. One tool, `ask`, whose `attack` argument picks the request:
//!
//! - `huge_schema`: a form whose requested schema is `size` bytes (a valid JSON object);
//! - `huge_message`: a flat form whose message is `size` bytes;
//! - `huge_tools`: a sampling request whose `tools` JSON is `size` bytes;
//! - `nested`: a form whose property is an object with properties of its own;
//! - `url`: a URL elicitation to the `url` argument;
//! - `flat`: an ordinary one-field form (what the host must let through).
//!
//! On the next round it answers with what came back for its request: `answered` or
//! `refused: <the host's reason>`.

wit_bindgen::generate!({
    path: "../../../wit/v0.2.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use serde_json::{Value, json};
use warden::plugin::types::{
    CallResult, Content, ElicitForm, ElicitUrl, Error, InputAnswer, InputAnswers, InputRequest, InputRequired,
    KeyedRequest, Role, SamplingMessage, SamplingRequest, Tool, ToolReply,
};

struct Hostile;

export!(Hostile);

/// The key of the one request each round asks.
const KEY: &str = "question";

fn text(text: String) -> CallResult {
    CallResult {
        content: vec![Content::Text(text)],
        structured_content: None,
        is_error: false,
    }
}

/// `{"type":"object","properties":{"p0":{"type":"string"},…}}`, at least `size` bytes.
fn big_schema(size: usize) -> String {
    let mut schema = String::with_capacity(size + 64);
    schema.push_str(r#"{"type":"object","properties":{"#);
    let mut index = 0;
    while schema.len() < size {
        if index > 0 {
            schema.push(',');
        }
        schema.push_str(&format!(r#""p{index}":{{"type":"string"}}"#));
        index += 1;
    }
    schema.push_str("}}");
    schema
}

/// A JSON array of sampling tools, at least `size` bytes.
fn big_tools(size: usize) -> String {
    let mut tools = String::with_capacity(size + 64);
    tools.push('[');
    let mut index = 0;
    while tools.len() < size {
        if index > 0 {
            tools.push(',');
        }
        tools.push_str(&format!(
            r#"{{"name":"t{index}","inputSchema":{{"type":"object","properties":{{"a":{{"type":"string"}}}}}}}}"#
        ));
        index += 1;
    }
    tools.push(']');
    tools
}

fn form(message: String, schema: String) -> InputRequest {
    InputRequest::ElicitForm(ElicitForm {
        message,
        requested_schema: schema,
    })
}

fn request(arguments: &Value) -> Result<InputRequest, Error> {
    let size = arguments["size"].as_u64().unwrap_or(1 << 20) as usize;
    let flat = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}).to_string();
    Ok(match arguments["attack"].as_str().unwrap_or_default() {
        "huge_schema" => form("Fill this in".into(), big_schema(size)),
        "huge_message" => form("x".repeat(size), flat),
        "huge_tools" => InputRequest::Sample(SamplingRequest {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: Content::Text("Pick a tool".into()),
            }],
            system_prompt: None,
            max_tokens: 10,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            tools: Some(big_tools(size)),
        }),
        "nested" => form(
            "Where do you live?".into(),
            json!({"type": "object", "properties": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}}})
                .to_string(),
        ),
        "url" => InputRequest::ElicitUrl(ElicitUrl {
            message: "Please sign in".into(),
            url: arguments["url"].as_str().unwrap_or_default().to_string(),
            elicitation_id: "sign-in-1".into(),
        }),
        "flat" => form("Sure?".into(), flat),
        other => return Err(Error::InvalidArguments(format!("unknown attack {other:?}"))),
    })
}

/// What came back for the request.
fn report(input: InputAnswers) -> String {
    let answers: Vec<String> = input
        .answers
        .into_iter()
        .filter(|answer| answer.key == KEY)
        .map(|answer| match answer.answer {
            InputAnswer::Refused(why) => format!("refused: {why}"),
            _ => "answered".to_string(),
        })
        .collect();
    if answers.is_empty() {
        "no answer".to_string()
    } else {
        answers.join("; ")
    }
}

impl Guest for Hostile {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "ask".into(),
            title: None,
            description: "Asks the client for input the host must refuse; reports what came back.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "attack": {"type": "string"},
                    "url": {"type": "string"},
                    "size": {"type": "integer", "minimum": 0}
                },
                "required": ["attack"]
            })
            .to_string(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn call_tool(name: String, arguments: String, input: Option<InputAnswers>) -> Result<ToolReply, Error> {
        if name != "ask" {
            return Err(Error::NotFound(name));
        }
        if let Some(input) = input {
            return Ok(ToolReply::Done(text(report(input))));
        }
        let arguments: Value = serde_json::from_str(&arguments).map_err(|e| Error::InvalidArguments(e.to_string()))?;
        Ok(ToolReply::InputRequired(InputRequired {
            requests: vec![KeyedRequest {
                key: KEY.into(),
                request: request(&arguments)?,
            }],
            state: Vec::new(),
        }))
    }
}
