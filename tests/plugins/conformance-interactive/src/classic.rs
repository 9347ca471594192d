//! The 2025-11-25 suite's tools (`tools-call-sampling`, `tools-call-elicitation`,
//! `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`): the host sends the client
//! `sampling/createMessage` or `elicitation/create` itself and calls again with the answer.
//! And `test_missing_capability` (2026-07-28 `server-stateless`), which asks for sampling
//! without checking first, so that the host refuses a client without it (-32021).

use crate::requests;
use crate::rounds::{Answers, Lack, Reply, Step, action_name, content, round};
use crate::tools::{failure, text};
use crate::warden::plugin::host::{self, Interaction};
use crate::warden::plugin::types::{CallResult, InputAnswers, KeyedRequest};
use serde_json::{Value, json};

pub const SAMPLING: &str = "test_sampling";
pub const ELICITATION: &str = "test_elicitation";
pub const SEP1034: &str = "test_elicitation_sep1034_defaults";
pub const SEP1330: &str = "test_elicitation_sep1330_enums";
pub const MISSING_CAPABILITY: &str = "test_missing_capability";

/// The key of each tool's one request.
const ANSWER: &str = "answer";

/// `LLM response: <text>` once the model answered `prompt`.
pub fn sampling(prompt: String, input: Option<InputAnswers>) -> Reply<CallResult> {
    if !host::can_ask(Interaction::Sample) {
        return Reply::Done(failure(
            "Sampling is not available: the client did not declare it, or the operator did not grant it.",
        ));
    }
    round(SAMPLING, &[ANSWER], input, |answers| {
        llm_response(answers, || requests::sample(ANSWER, &prompt, 100))
    })
}

/// Like `test_sampling`, without asking `host.can-ask` first.
pub fn missing_capability(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(MISSING_CAPABILITY, &[ANSWER], input, |answers| {
        llm_response(answers, || {
            requests::sample(ANSWER, "Say hello in one short sentence.", 50)
        })
    })
}

fn llm_response(answers: &Answers, ask: impl FnOnce() -> KeyedRequest) -> Step<CallResult> {
    match answers.sampled_text(ANSWER) {
        Ok(answer) => Step::Done(text(format!("LLM response: {answer}"))),
        Err(Lack::Ask) => Step::Ask(vec![ask()]),
        Err(Lack::Without(why)) => Step::Done(failure(format!("The model gave no answer: {why}."))),
    }
}

/// `User response: action=<action>, content=<json>`.
pub fn elicitation(message: String, input: Option<InputAnswers>) -> Reply<CallResult> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "User's response" },
            "email": { "type": "string", "description": "User's email address" }
        },
        "required": ["username", "email"]
    });
    elicit(ELICITATION, &message, schema, "User response", input)
}

/// `Elicitation completed: action=<action>, content=<json>`, after a form whose fields have defaults.
pub fn sep1034_defaults(input: Option<InputAnswers>) -> Reply<CallResult> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    });
    elicit(
        SEP1034,
        "Please review and update the form fields with defaults",
        schema,
        "Elicitation completed",
        input,
    )
}

/// `Elicitation completed: action=<action>, content=<json>`, after a form with every kind of enum.
pub fn sep1330_enums(input: Option<InputAnswers>) -> Reply<CallResult> {
    let titled = |titles: [&str; 3]| -> Vec<Value> {
        titles
            .iter()
            .enumerate()
            .map(|(i, title)| json!({ "const": format!("value{}", i + 1), "title": title }))
            .collect()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled(["First Option", "Second Option", "Third Option"])
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": { "anyOf": titled(["First Choice", "Second Choice", "Third Choice"]) }
            }
        },
        "required": []
    });
    elicit(
        SEP1330,
        "Please select options from the enum fields",
        schema,
        "Elicitation completed",
        input,
    )
}

/// Asks for the form; reports `<label>: action=<action>, content=<json>` (`{}` without content).
fn elicit(
    fixture: &'static str,
    message: &str,
    schema: Value,
    label: &str,
    input: Option<InputAnswers>,
) -> Reply<CallResult> {
    if !host::can_ask(Interaction::ElicitForm) {
        return Reply::Done(failure(
            "Elicitation is not available: the client did not declare it, or the operator did not grant it.",
        ));
    }
    round(fixture, &[ANSWER], input, |answers| match answers.elicited(ANSWER) {
        Ok(answer) => {
            let content = match content(answer) {
                Value::Null => json!({}),
                content => content,
            };
            Step::Done(text(format!(
                "{label}: action={}, content={content}",
                action_name(answer.action)
            )))
        }
        Err(Lack::Ask) => Step::Ask(vec![requests::form(ANSWER, message, schema)]),
        Err(Lack::Without(why)) => Step::Done(failure(format!("The user could not be asked: {why}."))),
    })
}
