//! The tool list, and each call handed to its fixture.

use crate::Interactive;
use crate::exports::warden::plugin::tools::Guest;
use crate::rounds::Reply;
use crate::warden::plugin::types::{
    CallResult, Content, Error, InputAnswers, TaskSupport, Tool, ToolExecution, ToolReply,
};
use crate::{classic, mrtr, tasks};
use serde_json::{Value, json};

/// The tools without arguments, with their descriptions.
const NO_ARGUMENT_TOOLS: [(&str, &str); 11] = [
    (
        classic::SEP1034,
        "Asks the user for a form whose fields (string, integer, number, enum, boolean) have default values (SEP-1034), and reports the answer.",
    ),
    (
        classic::SEP1330,
        "Asks the user for a form with the five kinds of enum field (SEP-1330), and reports the answer.",
    ),
    (
        classic::MISSING_CAPABILITY,
        "Asks the client's model for a short text without checking that the client supports sampling: a client without sampling gets a missing-capability error.",
    ),
    (mrtr::ELICITATION, "Asks the user's name, then greets them."),
    (
        mrtr::SAMPLING,
        "Asks the client's model for the capital of France, and reports its answer.",
    ),
    (mrtr::LIST_ROOTS, "Asks the client for its roots, and lists them."),
    (
        mrtr::REQUEST_STATE,
        "Asks the user to confirm, and checks that its request state came back intact (\"state-ok\").",
    ),
    (
        mrtr::MULTIPLE_INPUTS,
        "Asks the user's name, a greeting from the client's model and the client's roots, all in one round.",
    ),
    (
        mrtr::MULTI_ROUND,
        "Asks the user's name, then in a second round their favorite color, then answers with both.",
    ),
    (
        mrtr::TAMPERED_STATE,
        "Asks the user to confirm; its request state is signed, so a retry with an altered state is refused.",
    ),
    (
        mrtr::CAPABILITIES,
        "Asks the user and the client's model something, but only what the client declared it supports.",
    ),
];

fn no_arguments() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

/// A schema with one required string argument.
fn one_string(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: { "type": "string", "description": description } },
        "required": [name],
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

pub fn text(text: impl Into<String>) -> CallResult {
    CallResult {
        content: vec![Content::Text(text.into())],
        structured_content: None,
        is_error: false,
    }
}

/// A result the model sees as a failure.
pub fn failure(message: impl Into<String>) -> CallResult {
    CallResult {
        is_error: true,
        ..text(message)
    }
}

fn parse(arguments: &str) -> Result<Value, Error> {
    serde_json::from_str(arguments).map_err(|e| Error::InvalidArguments(e.to_string()))
}

/// The string argument `name` (the host has checked it against the schema already).
fn string_argument(arguments: &str, name: &str) -> Result<String, Error> {
    let arguments: Value = serde_json::from_str(arguments).map_err(|e| Error::InvalidArguments(e.to_string()))?;
    match &arguments[name] {
        Value::String(value) => Ok(value.clone()),
        _ => Err(Error::InvalidArguments(format!("`{name}` must be a string"))),
    }
}

impl Guest for Interactive {
    /// The task fixtures' support, as the suite expects it (an operator's
    /// `[tasks]` could still override it).
    fn list_tool_execution() -> Vec<ToolExecution> {
        [
            (tasks::SLOW_COMPUTE, TaskSupport::Optional),
            (tasks::CONFIRM_DELETE, TaskSupport::Optional),
            (tasks::MULTI_INPUT, TaskSupport::Optional),
            (tasks::FAILING_JOB, TaskSupport::Required),
            (tasks::PROTOCOL_ERROR_JOB, TaskSupport::Required),
            (tasks::WITH_TASK, TaskSupport::Required),
        ]
        .into_iter()
        .map(|(tool, task_support)| ToolExecution {
            tool: tool.to_string(),
            task_support,
        })
        .collect()
    }

    fn list_tools() -> Vec<Tool> {
        let mut tools = vec![
            tool(
                classic::SAMPLING,
                "Asks the client's model to answer `prompt` (at most 100 tokens), and reports its answer.",
                one_string("prompt", "The prompt to send to the client's model."),
            ),
            tool(
                classic::ELICITATION,
                "Shows the user `message` and asks for a username and an email address, and reports the answer.",
                one_string("message", "The message to show the user."),
            ),
        ];
        tools.push(tool(
            tasks::SLOW_COMPUTE,
            "Computes for `seconds` seconds (reporting progress), then reports that it finished; stops when cancelled.",
            json!({
                "type": "object",
                "properties": {
                    "seconds": { "type": "number", "minimum": 0, "maximum": 600, "description": "How long to compute." },
                    "label": { "type": "string", "description": "A name for this computation, echoed in the result." }
                },
                "required": ["seconds"],
                "additionalProperties": false
            }),
        ));
        tools.push(tool(
            tasks::CONFIRM_DELETE,
            "Asks the user to confirm, then deletes `filename` (nothing is deleted: a test fixture).",
            one_string("filename", "The file to delete."),
        ));
        for (name, description) in [
            (tasks::FAILING_JOB, "Works for a second, then fails with a tool error."),
            (
                tasks::PROTOCOL_ERROR_JOB,
                "Asks the client for its roots; a client without roots gets a JSON-RPC error.",
            ),
            (tasks::MULTI_INPUT, "Asks two names at once, then reports both."),
            (tasks::WITH_TASK, "Asks the user's name, then greets them from a task."),
        ] {
            tools.push(tool(name, description, no_arguments()));
        }
        tools.extend(
            NO_ARGUMENT_TOOLS
                .iter()
                .map(|(name, description)| tool(name, description, no_arguments())),
        );
        tools
    }

    fn call_tool(name: String, arguments: String, input: Option<InputAnswers>) -> Result<ToolReply, Error> {
        let reply = match name.as_str() {
            classic::SAMPLING => classic::sampling(string_argument(&arguments, "prompt")?, input),
            classic::ELICITATION => classic::elicitation(string_argument(&arguments, "message")?, input),
            classic::SEP1034 => classic::sep1034_defaults(input),
            classic::SEP1330 => classic::sep1330_enums(input),
            classic::MISSING_CAPABILITY => classic::missing_capability(input),
            mrtr::ELICITATION => mrtr::elicitation(input),
            mrtr::SAMPLING => mrtr::sampling(input),
            mrtr::LIST_ROOTS => mrtr::list_roots(input),
            mrtr::REQUEST_STATE => mrtr::request_state(input),
            mrtr::MULTIPLE_INPUTS => mrtr::multiple_inputs(input),
            mrtr::MULTI_ROUND => mrtr::multi_round(input),
            mrtr::TAMPERED_STATE => mrtr::tampered_state(input),
            mrtr::CAPABILITIES => mrtr::capabilities(input),
            tasks::SLOW_COMPUTE => Reply::Done(tasks::slow_compute(&parse(&arguments)?)),
            tasks::FAILING_JOB => Reply::Done(tasks::failing_job()),
            tasks::PROTOCOL_ERROR_JOB => tasks::protocol_error_job(input),
            tasks::CONFIRM_DELETE => tasks::confirm_delete(&parse(&arguments)?, input),
            tasks::MULTI_INPUT => tasks::multi_input(input),
            tasks::WITH_TASK => tasks::with_task(input),
            _ => return Err(Error::NotFound(name)),
        };
        Ok(match reply {
            Reply::Done(result) => ToolReply::Done(result),
            Reply::InputRequired(input) => ToolReply::InputRequired(input),
        })
    }
}
