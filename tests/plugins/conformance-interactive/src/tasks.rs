//! The task fixtures of the 2026-07-28 suite (SEP-2663, `tasks-*`). The plugin declares each one's
//! task support itself (`list-tool-execution` in `tools.rs`, contract 0.3.0): `slow_compute`,
//! `confirm_delete` and `multi_input` may become tasks, `failing_job`, `protocol_error_job` and
//! `test_tool_with_task` must; an operator's manifest (`[tasks]`) may still override that. A call
//! becomes a task once it outlives Warden's short immediate window, so the fixtures that ask
//! through a task work a moment before asking; the one that asks before its task exists
//! (`test_tool_with_task`) asks at once.

use std::time::{Duration, Instant};

use crate::requests;
use crate::rounds::{Lack, Reply, Step, round};
use crate::tools::{failure, text};
use crate::warden::plugin::host;
use crate::warden::plugin::types::{CallResult, InputAnswers};
use serde_json::Value;

pub const SLOW_COMPUTE: &str = "slow_compute";
pub const FAILING_JOB: &str = "failing_job";
pub const PROTOCOL_ERROR_JOB: &str = "protocol_error_job";
pub const CONFIRM_DELETE: &str = "confirm_delete";
pub const MULTI_INPUT: &str = "multi_input";
pub const WITH_TASK: &str = "test_tool_with_task";

/// Longer than the host's immediate window, so that the call is a task by the time it asks.
const WORK_BEFORE_ASKING: Duration = Duration::from_millis(300);

/// Sleeps for `time`, looking at `host.cancelled()` every 50 ms; false when cancelled.
fn work(time: Duration) -> bool {
    let until = Instant::now() + time;
    while Instant::now() < until {
        if host::cancelled() {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    !host::cancelled()
}

/// `seconds` of work, with progress, then a result naming `label`.
pub fn slow_compute(arguments: &Value) -> CallResult {
    let seconds = arguments["seconds"].as_f64().unwrap_or(0.0).clamp(0.0, 600.0);
    let label = arguments["label"].as_str().unwrap_or("unlabelled");
    let steps = (seconds * 4.0).ceil().max(1.0);
    for step in 1..=steps as u32 {
        if !work(Duration::from_secs_f64(seconds / steps)) {
            return failure(format!("slow_compute `{label}` was cancelled"));
        }
        host::progress(
            f64::from(step),
            Some(steps),
            Some(&format!("computing `{label}`: step {step} of {steps}")),
        );
    }
    text(format!("slow_compute `{label}` finished after {seconds} s"))
}

/// A second of work, then a tool error.
pub fn failing_job() -> CallResult {
    work(Duration::from_secs(1));
    failure("failing_job failed, as it always does")
}

/// Asks for the client's roots, which the suite's clients do not declare: Warden answers the
/// call with a JSON-RPC error (`-32021`), and the task fails with it.
pub fn protocol_error_job(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(PROTOCOL_ERROR_JOB, &["roots"], input, |answers| {
        match answers.roots("roots") {
            Ok(_) => Step::Done(text("the client had roots after all")),
            Err(Lack::Ask) => Step::Ask(vec![requests::list_roots("roots")]),
            Err(Lack::Without(why)) => Step::Done(failure(why)),
        }
    })
}

/// Looks the file up, asks the user to confirm, then "deletes" it.
pub fn confirm_delete(arguments: &Value, input: Option<InputAnswers>) -> Reply<CallResult> {
    let filename = arguments["filename"].as_str().unwrap_or("the file").to_string();
    if input.is_none() {
        work(WORK_BEFORE_ASKING);
    }
    round(CONFIRM_DELETE, &["confirm"], input, |answers| {
        match answers.form("confirm") {
            Ok(form) if form["confirm"] == Value::Bool(true) => Step::Done(text(format!("deleted {filename}"))),
            Ok(_) => Step::Done(text(format!("kept {filename}: not confirmed"))),
            Err(Lack::Ask) => Step::Ask(vec![requests::form_field(
                "confirm",
                &format!("Delete {filename}?"),
                "confirm",
                "boolean",
            )]),
            Err(Lack::Without(why)) => Step::Done(text(format!("kept {filename}: {why}"))),
        }
    })
}

/// Asks two questions at once, and answers once both are answered.
pub fn multi_input(input: Option<InputAnswers>) -> Reply<CallResult> {
    if input.is_none() {
        work(WORK_BEFORE_ASKING);
    }
    round(MULTI_INPUT, &["first", "second"], input, |answers| {
        let first = answers.form_string("first", "name");
        let second = answers.form_string("second", "name");
        match (first, second) {
            (Ok(first), Ok(second)) => Step::Done(text(format!("first: {first}, second: {second}"))),
            (first, second) => {
                let mut ask = Vec::new();
                if matches!(first, Err(Lack::Ask)) {
                    ask.push(requests::form_field("first", "The first name?", "name", "string"));
                }
                if matches!(second, Err(Lack::Ask)) {
                    ask.push(requests::form_field("second", "The second name?", "name", "string"));
                }
                if ask.is_empty() {
                    Step::Done(failure("an answer was declined"))
                } else {
                    Step::Ask(ask)
                }
            }
        }
    })
}

/// Asks the user's name before its task exists, then greets them from the task.
pub fn with_task(input: Option<InputAnswers>) -> Reply<CallResult> {
    round(WITH_TASK, &["user_name"], input, |answers| {
        match answers.form_string("user_name", "name") {
            Ok(name) => Step::Done(text(format!("Hello, {name}! (from a task)"))),
            Err(Lack::Ask) => Step::Ask(vec![requests::form_field(
                "user_name",
                "What is your name?",
                "name",
                "string",
            )]),
            Err(Lack::Without(why)) => Step::Done(failure(format!("No name: {why}."))),
        }
    })
}
