//! One tool call, from arguments to the MCP result: validate, run in a
//! fresh sandbox, convert and hold to the limits. Shared by the MCP handler
//! and `warden call`, so both answer exactly alike.

use std::time::{Duration, Instant};

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::Value;

use super::content::{self, ContentError};
use super::interaction::{Asker, Binding, Retry};
use super::invocation::Ended;
use super::plugin_call::{PluginReply, drive_and_convert};
use warden_plugins::declarations::{self, ToolDecl};
use warden_plugins::plugin::{Plugin, ToolArguments};
use warden_runtime::audit::{self, Outcome};
use warden_runtime::contract::ToolResult;
use warden_runtime::{CallContext, CallReport, Runtime};

/// A tool call's arguments, a JSON object, and their text: serialised once,
/// for the audited byte count, the `requestState` binding and every round's
/// sandbox.
pub struct Arguments {
    pub value: Value,
    pub json: String,
}

impl Arguments {
    pub fn new(value: Value) -> Self {
        let json = value.to_string();
        Self { value, json }
    }
}

pub fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A tool's error, with what the sandbox refused during the call: a plugin
/// that reports a failed request in its own words ("connection error")
/// would otherwise hide that the manifest is why, and how to change it.
/// (A crash says the same through `CallFailure::describe`.)
fn explained(mut result: CallToolResult, report: &CallReport) -> CallToolResult {
    if let Some(first) = report.denials.first() {
        let more = match report.denials.len() - 1 {
            0 => String::new(),
            _ => " (the audit record lists the others)".to_string(),
        };
        let note = format!("Warden: the sandbox refused an access during this call: {first}{more}");
        // Beside the plugin's own words, in its text when it gave one.
        let last_text = result.content.iter_mut().rev().find_map(|block| match block {
            ContentBlock::Text(text) => Some(text),
            _ => None,
        });
        match last_text {
            Some(text) => text.text = format!("{}\n\n{note}", text.text),
            None => result.content.push(ContentBlock::text(note)),
        }
    }
    result
}

/// Runs tool `name` (declared as `decl`) of `plugin` with `arguments`.
/// `started` is when the call began, for the timings. A tool's failure is a
/// result (`isError`), never an error answer; only a request the client
/// could not make is.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    runtime: &Runtime,
    plugin: &Plugin,
    decl: &ToolDecl,
    name: &str,
    arguments: &Arguments,
    call: CallContext,
    started: Instant,
    asker: &Asker<'_>,
    retry: Retry<'_>,
) -> Ended<CallToolResponse> {
    let limit = plugin.prepared.settings.limits.output;
    let mut violations = declarations::violations(&decl.input, &arguments.value);
    // What a schema cannot say (a base64 body): checked before any sandbox exists.
    let mut plain_params = None;
    if violations.is_empty() {
        match plugin.check_arguments(name, &arguments.value) {
            Ok(params) => plain_params = params,
            Err(problem) => violations.push(problem),
        }
    }
    let validated = started.elapsed();
    if !violations.is_empty() {
        let text = format!(
            "the arguments do not match the input schema of `{name}`:\n- {}",
            violations.join("\n- ")
        );
        // A rejected call never reached a sandbox: it has no timings.
        return Ended {
            answer: Ok(error_result(text).into()),
            outcome: Outcome::Rejected,
            detail: None,
            timing: None,
            report: CallReport::default(),
        };
    }

    let binding = Binding::new(
        &asker.caller,
        &plugin.sha256,
        "tools/call",
        name,
        [arguments.json.as_bytes()],
    );
    let prepare = |asked| asker.prepare(asked);
    let mut converted = Duration::ZERO;
    let plain_params = plain_params.as_deref();
    let round = |input: Option<_>, call| {
        let prepare = &prepare;
        async move {
            plugin
                .call_tool(
                    runtime,
                    name,
                    ToolArguments {
                        value: &arguments.value,
                        json: &arguments.json,
                        plain: plain_params,
                    },
                    input.as_ref(),
                    call,
                    prepare,
                )
                .await
        }
    };
    let convert = |reply: PluginReply<ToolResult>, report| {
        let converting = Instant::now();
        let tool_desc = format!("`{name}`");
        let refused = |error: ContentError| {
            // Logged, and may quote the answer: see `errors::content_error`.
            let text =
                plugin
                    .redactor()
                    .redact_owned(error.describe(&plugin.name, &plugin.manifest_name(), &tool_desc));
            tracing::warn!("{text}");
            (error_result(text.clone()), error.outcome(), Some(text))
        };
        let (result, outcome, detail) = match reply {
            Err(failure) => {
                let text = failure.describe(&plugin.name, &plugin.manifest_name(), &tool_desc);
                (error_result(text.clone()), failure.outcome(), Some(text))
            }
            Ok(Err(tool_error)) => match content::tool_error(tool_error, limit) {
                Ok(text) => (explained(error_result(text), &report), Outcome::ToolError, None),
                Err(error) => refused(error),
            },
            Ok(Ok(reply)) => match content::call_result(reply, decl, limit) {
                Ok(result) => {
                    if result.is_error == Some(true) {
                        (explained(result, &report), Outcome::ToolError, None)
                    } else {
                        (result, Outcome::Ok, None)
                    }
                }
                Err(error) => refused(error),
            },
        };
        converted = converting.elapsed();
        Ended {
            answer: Ok(result.into()),
            outcome,
            detail,
            timing: None,
            report,
        }
    };
    let mut ended = drive_and_convert(
        asker,
        &binding,
        retry,
        &call,
        round,
        CallToolResponse::InputRequired,
        convert,
    )
    .await;
    // A retry the client could not make never reached a sandbox either.
    ended.timing = (ended.outcome != Outcome::Rejected).then(|| audit::Timing {
        validate_us: audit::micros(validated),
        setup_us: audit::micros(ended.report.setup),
        instantiate_us: audit::micros(ended.report.instantiate),
        instantiated_ahead_us: audit::micros(ended.report.instantiated_ahead),
        guest_us: audit::micros(ended.report.run),
        convert_us: audit::micros(converted),
        fuel_used: ended.report.fuel_used,
    });
    ended
}
