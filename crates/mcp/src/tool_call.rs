//! One tool call, from arguments to the MCP result: validate, run in a
//! fresh sandbox, convert and hold to the limits. Shared by the MCP handler
//! and `warden call`, so both answer exactly alike.

use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::Value;

use super::content::{self, ContentError};
use super::interaction::{self, Asker, Binding, Driven, Retry};
use warden_plugins::declarations::{self, ToolDecl};
use warden_plugins::plugin::Plugin;
use warden_runtime::audit::Outcome;
use warden_runtime::{CallContext, CallReport, Runtime};

/// What one tool call came to.
pub struct ToolCall {
    /// The result; on the 2026-07-28 wire, possibly "answer these first";
    /// an error for a request the client cannot make (a bad `requestState`,
    /// a capability it lacks).
    pub result: Result<CallToolResponse, McpError>,
    pub outcome: Outcome,
    /// For the audit log: the message of a failure Warden (not the tool) reported.
    pub detail: Option<String>,
    pub report: CallReport,
    /// When validation ended, from the call's start.
    pub validated: Duration,
    /// How long converting the answer took.
    pub converted: Duration,
}

pub fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Runs tool `name` (declared as `decl`) of `plugin` with `arguments`, a
/// JSON object. `started` is when the call began, for the timings.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    runtime: &Runtime,
    plugin: &Plugin,
    decl: &ToolDecl,
    name: &str,
    arguments: &Value,
    call: CallContext,
    started: Instant,
    asker: &Asker<'_>,
    retry: Retry<'_>,
) -> ToolCall {
    let limit = plugin.prepared.settings.limits.output;
    let mut violations = declarations::violations(&decl.input, arguments);
    // What a schema cannot say (a base64 body): checked before any sandbox exists.
    if violations.is_empty()
        && let Err(problem) = plugin.check_arguments(name, arguments)
    {
        violations.push(problem);
    }
    let validated = started.elapsed();
    if !violations.is_empty() {
        let text = format!(
            "the arguments do not match the input schema of `{name}`:\n- {}",
            violations.join("\n- ")
        );
        return ToolCall {
            result: Ok(error_result(text).into()),
            outcome: Outcome::Rejected,
            detail: None,
            report: CallReport::default(),
            validated,
            converted: Duration::ZERO,
        };
    }

    let binding = Binding::new(
        &asker.caller,
        &plugin.sha256,
        "tools/call",
        name,
        arguments.to_string().as_bytes(),
    );
    let mut denied = Vec::new();
    let prepare = |asked| asker.prepare(asked);
    let driven = interaction::drive(asker, &binding, retry, &mut denied, |input, asks| {
        let mut call = call.clone();
        call.asks = asks;
        let prepare = &prepare;
        async move {
            plugin
                .call_tool(runtime, name, arguments, input.as_ref(), call, prepare)
                .await
        }
    })
    .await;
    let (reply, mut report) = match driven {
        Ok(Driven::Done(reply, report)) => (reply, report),
        Ok(Driven::InputRequired(asked, mut report)) => {
            report.add_interaction_denials(denied);
            return ToolCall {
                result: Ok(CallToolResponse::InputRequired(asked)),
                outcome: Outcome::InputRequired,
                detail: None,
                report,
                validated,
                converted: Duration::ZERO,
            };
        }
        Err(error) => {
            return ToolCall {
                detail: Some(error.message.to_string()),
                result: Err(error),
                outcome: Outcome::Rejected,
                report: {
                    let mut report = CallReport::default();
                    report.add_interaction_denials(denied);
                    report
                },
                validated,
                converted: Duration::ZERO,
            };
        }
    };
    report.add_interaction_denials(denied);

    let converting = Instant::now();
    let tool_desc = format!("`{name}`");
    let refused = |error: ContentError| {
        let text = error.describe(&plugin.name, &plugin.manifest_name(), &tool_desc);
        tracing::warn!("{text}");
        (error_result(text.clone()), error.outcome(), Some(text))
    };
    let (result, outcome, detail) = match reply {
        Err(failure) => {
            let text = failure.describe(&plugin.name, &plugin.manifest_name(), &tool_desc);
            (error_result(text.clone()), failure.outcome(), Some(text))
        }
        Ok(Err(tool_error)) => match content::tool_error(tool_error, limit) {
            Ok(text) => (error_result(text), Outcome::ToolError, None),
            Err(error) => refused(error),
        },
        Ok(Ok(reply)) => match content::call_result(reply, decl, limit) {
            Ok(result) => {
                let outcome = if result.is_error == Some(true) {
                    Outcome::ToolError
                } else {
                    Outcome::Ok
                };
                (result, outcome, None)
            }
            Err(error) => refused(error),
        },
    };
    ToolCall {
        result: Ok(result.into()),
        outcome,
        detail,
        report,
        validated,
        converted: converting.elapsed(),
    }
}
