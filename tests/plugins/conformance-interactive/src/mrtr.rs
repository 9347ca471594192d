//! The 2026-07-28 suite's input-required tools (SEP-2322, `input-required-result-*`), with the
//! keys and requests its scenarios name. Each asks again for an answer that is missing or
//! unusable (the client retried with wrong keys) and ignores answers under other keys.

use crate::requests;
use crate::rounds::{Lack, Reply, Step, round};
use crate::tools::{failure, text};
use crate::warden::plugin::host::{self, Interaction};
use crate::warden::plugin::types::{CallResult, InputAnswers, KeyedRequest, Root};

pub const ELICITATION: &str = "test_input_required_result_elicitation";
pub const SAMPLING: &str = "test_input_required_result_sampling";
pub const LIST_ROOTS: &str = "test_input_required_result_list_roots";
pub const REQUEST_STATE: &str = "test_input_required_result_request_state";
pub const MULTIPLE_INPUTS: &str = "test_input_required_result_multiple_inputs";
pub const MULTI_ROUND: &str = "test_input_required_result_multi_round";
pub const TAMPERED_STATE: &str = "test_input_required_result_tampered_state";
pub const CAPABILITIES: &str = "test_input_required_result_capabilities";

const USER_NAME: &str = "user_name";
const CAPITAL_QUESTION: &str = "capital_question";
const CLIENT_ROOTS: &str = "client_roots";
const CONFIRM: &str = "confirm";
const GREETING: &str = "greeting";
const STEP1: &str = "step1";
const STEP2: &str = "step2";
const USER_CHOICE: &str = "user_choice";
const MODEL_ANSWER: &str = "model_answer";

fn ask_name(key: &str, message: &str) -> KeyedRequest {
    requests::form_field(key, message, "name", "string")
}

fn ask_confirmation() -> KeyedRequest {
    requests::form_field(CONFIRM, "Please confirm", "ok", "boolean")
}

/// `<uri> (<name>)`, comma-separated.
fn list(roots: &[Root]) -> String {
    let roots: Vec<String> = roots
        .iter()
        .map(|root| match &root.name {
            Some(name) => format!("{} ({name})", root.uri),
            None => root.uri.clone(),
        })
        .collect();
    if roots.is_empty() {
        "none".to_string()
    } else {
        roots.join(", ")
    }
}

/// The value, or what to do without it: ask (again), or finish with a failure that says why.
fn or_step<T>(value: Result<T, Lack>, ask: impl FnOnce() -> KeyedRequest, what: &str) -> Result<T, Step<CallResult>> {
    value.map_err(|lack| match lack {
        Lack::Ask => Step::Ask(vec![ask()]),
        Lack::Without(why) => Step::Done(failure(format!("No {what}: {why}."))),
    })
}

/// `Hello, <name>!`.
pub fn elicitation(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(ELICITATION, &[USER_NAME], input, |answers| {
        let ask = || ask_name(USER_NAME, "What is your name?");
        match or_step(answers.form_string(USER_NAME, "name"), ask, "name") {
            Ok(name) => Step::Done(text(format!("Hello, {name}!"))),
            Err(step) => step,
        }
    })
}

/// `The model answered: <text>`.
pub fn sampling(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(SAMPLING, &[CAPITAL_QUESTION], input, |answers| {
        let ask = || requests::sample(CAPITAL_QUESTION, "What is the capital of France?", 100);
        match or_step(answers.sampled_text(CAPITAL_QUESTION), ask, "answer from the model") {
            Ok(answer) => Step::Done(text(format!("The model answered: {answer}"))),
            Err(step) => step,
        }
    })
}

/// `The client's roots: <uri> (<name>), …`.
pub fn list_roots(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(LIST_ROOTS, &[CLIENT_ROOTS], input, |answers| {
        let ask = || requests::list_roots(CLIENT_ROOTS);
        match or_step(answers.roots(CLIENT_ROOTS), ask, "roots") {
            Ok(roots) => Step::Done(text(format!("The client's roots: {}", list(roots)))),
            Err(step) => step,
        }
    })
}

/// `state-ok: …` when the state it handed back in round 1 comes back with the confirmation;
/// without it (a retry that dropped the state) it starts over.
pub fn request_state(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(REQUEST_STATE, &[CONFIRM], input, |answers| {
        if !answers.restored() {
            return Step::Ask(vec![ask_confirmation()]);
        }
        match or_step(answers.form(CONFIRM), ask_confirmation, "confirmation") {
            Ok(form) => Step::Done(text(format!(
                "state-ok: the request state came back intact; confirmed: {}",
                form["ok"]
            ))),
            Err(step) => step,
        }
    })
}

/// An elicitation, a sampling request and a roots request in one round; a retry missing some
/// of the answers is asked for those only (the others are in the state).
pub fn multiple_inputs(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(
        MULTIPLE_INPUTS,
        &[USER_NAME, GREETING, CLIENT_ROOTS],
        input,
        |answers| {
            let name = answers.form_string(USER_NAME, "name");
            let greeting = answers.sampled_text(GREETING);
            let roots = answers.roots(CLIENT_ROOTS).map(list);
            let mut ask = Vec::new();
            if let Err(Lack::Ask) = name {
                ask.push(ask_name(USER_NAME, "What is your name?"));
            }
            if let Err(Lack::Ask) = greeting {
                ask.push(requests::sample(GREETING, "Generate a greeting", 50));
            }
            if let Err(Lack::Ask) = roots {
                ask.push(requests::list_roots(CLIENT_ROOTS));
            }
            if !ask.is_empty() {
                return Step::Ask(ask);
            }
            let show = |value: Result<String, Lack>| match value {
                Ok(value) => value,
                Err(Lack::Without(why)) => format!("none ({why})"),
                Err(Lack::Ask) => unreachable!("asked above"),
            };
            Step::Done(text(format!(
                "Name: {}. Greeting: {}. Roots: {}.",
                show(name),
                show(greeting),
                show(roots)
            )))
        },
    )
}

/// Step 1 asks the name, step 2 (a new round, a new state holding the name) the favorite color.
pub fn multi_round(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(MULTI_ROUND, &[STEP1, STEP2], input, |answers| {
        let ask_name = || ask_name(STEP1, "Step 1: What is your name?");
        let name = match or_step(answers.form_string(STEP1, "name"), ask_name, "name") {
            Ok(name) => name,
            Err(step) => return step,
        };
        let ask_color = || requests::form_field(STEP2, "Step 2: What is your favorite color?", "color", "string");
        match or_step(answers.form_string(STEP2, "color"), ask_color, "color") {
            Ok(color) => Step::Done(text(format!("{name}'s favorite color is {color}."))),
            Err(step) => step,
        }
    })
}

/// An ordinary confirmation: the host signs the state, and refuses a retry whose state was altered.
pub fn tampered_state(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(TAMPERED_STATE, &[CONFIRM], input, |answers| {
        match or_step(answers.form(CONFIRM), ask_confirmation, "confirmation") {
            Ok(_) => Step::Done(text("Confirmed; the request state came back as it was sent.")),
            Err(step) => step,
        }
    })
}

/// Asks the user and the model, each only when `host.can-ask` says the client can answer.
pub fn capabilities(input: Option<InputAnswers>) -> Reply<CallResult> {
    let elicit = host::can_ask(Interaction::ElicitForm);
    let sample = host::can_ask(Interaction::Sample);
    if !elicit && !sample {
        return Reply::Done(text(
            "The client can answer neither elicitation nor sampling: nothing was asked.",
        ));
    }
    round(CAPABILITIES, &[USER_CHOICE, MODEL_ANSWER], input, |answers| {
        let mut ask = Vec::new();
        let mut report = Vec::new();
        if elicit {
            match answers.form_string(USER_CHOICE, "choice") {
                Ok(choice) => report.push(format!("the user chose {choice}")),
                Err(Lack::Without(why)) => report.push(format!("the user gave no choice ({why})")),
                Err(Lack::Ask) => ask.push(requests::form_field(USER_CHOICE, "Pick a word.", "choice", "string")),
            }
        }
        if sample {
            match answers.sampled_text(MODEL_ANSWER) {
                Ok(answer) => report.push(format!("the model answered {answer}")),
                Err(Lack::Without(why)) => report.push(format!("the model gave no answer ({why})")),
                Err(Lack::Ask) => ask.push(requests::sample(MODEL_ANSWER, "Pick a word.", 20)),
            }
        }
        if !ask.is_empty() {
            return Step::Ask(ask);
        }
        Step::Done(text(format!(
            "Asked only what the client supports: {}.",
            report.join("; ")
        )))
    })
}
