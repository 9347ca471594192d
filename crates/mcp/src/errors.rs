//! How what went wrong becomes a JSON-RPC error: unknown names, requests
//! outside the caller's grant, and plugin failures outside a tool call.

use rmcp::ErrorData as McpError;
use serde_json::json;

use crate::content::{self, ContentError};
use warden_plugins::plugin::Plugin;
use warden_runtime::CallFailure;
use warden_runtime::audit::{InvocationKind, Outcome};
use warden_runtime::contract::types;
use warden_runtime::metrics;

/// A request named a tool, prompt, resource or template the catalog does
/// not hold: counted without the name, which the client chose.
pub(crate) fn unknown_target(kind: InvocationKind) {
    if let Some(metrics) = metrics::get() {
        metrics.unknown_target(kind);
    }
}

pub(crate) fn unknown_tool(name: &str) -> McpError {
    unknown_target(InvocationKind::ToolCall);
    McpError::invalid_params(
        format!("unknown tool `{name}`; call tools/list for the tools this server offers"),
        Some(json!({ "name": name })),
    )
}

/// A tool whose calls are only ever tasks, called by a client that did not
/// declare the tasks extension (SEP-2663: `-32021`, naming the extension).
pub(crate) fn task_required(name: &str) -> McpError {
    let mut error =
        McpError::missing_required_client_capability(rmcp::model::ClientCapabilities::builder().enable_tasks().build());
    error.message = format!(
        "the tool `{name}` runs only as a task: declare the `{}` extension in the request's `_meta` client capabilities (2026-07-28 wire)",
        rmcp::model::TASKS_EXTENSION_ID
    )
    .into();
    error
}

/// A task asked of a replica that is shutting down.
pub(crate) fn shutting_down() -> McpError {
    McpError::internal_error("this Warden is shutting down and takes no new tasks; call again", None)
}

pub(crate) fn unknown_prompt(name: &str) -> McpError {
    unknown_target(InvocationKind::PromptGet);
    McpError::invalid_params(
        format!("unknown prompt `{name}`; call prompts/list for the prompts this server offers"),
        Some(json!({ "name": name })),
    )
}

/// The prompt of a completion's reference is not served.
pub(crate) fn unknown_completed_prompt(name: &str) -> McpError {
    unknown_target(InvocationKind::Completion);
    McpError::invalid_params(format!("unknown prompt `{name}`"), Some(json!({ "name": name })))
}

/// The template of a completion's reference is not served.
pub(crate) fn unknown_completed_template(uri: &str) -> McpError {
    unknown_target(InvocationKind::Completion);
    McpError::invalid_params(
        format!("unknown resource template `{uri}`; call resources/templates/list for the templates"),
        Some(json!({ "uri": uri })),
    )
}

/// `-32602` for a URI no plugin serves, with the URI in `data` as the
/// 2026-07-28 wire asks.
pub(crate) fn resource_not_found(uri: &str, detail: Option<String>) -> McpError {
    let message = detail.unwrap_or_else(|| {
        format!("no resource `{uri}`; call resources/list and resources/templates/list for what this server offers")
    });
    McpError::invalid_params(message, Some(json!({ "uri": uri })))
}

/// The refusal of a request outside the caller's grant (`what` names what
/// it would use).
pub(crate) fn not_permitted(what: &str) -> McpError {
    McpError::invalid_request(
        format!("your access does not include {what}; ask the operator for a scope that grants it"),
        None,
    )
}

/// A plugin failure outside a tool call is a JSON-RPC error: the request
/// could not be answered.
pub(crate) fn failure_error(failure: &CallFailure, plugin: &Plugin, what: &str) -> McpError {
    let text = failure.describe(&plugin.name, &plugin.manifest_name(), what);
    tracing::warn!("{text}");
    McpError::internal_error(text, None)
}

/// A failed call and the outcome it is audited with.
pub(crate) fn call_failed(failure: &CallFailure, plugin: &Plugin, what: &str) -> (Outcome, McpError) {
    (failure.outcome(), failure_error(failure, plugin, what))
}

pub(crate) fn content_error(error: &ContentError, plugin: &Plugin, what: &str) -> McpError {
    // Warden's words about the answer, which may quote it (a schema
    // violation names the value): logged, so the plugin's secrets are redacted.
    let text = plugin
        .redactor()
        .redact_owned(error.describe(&plugin.name, &plugin.manifest_name(), what));
    tracing::warn!("{text}");
    McpError::internal_error(text, None)
}

/// Content over the limits and the outcome it is audited with.
pub(crate) fn content_refused(error: &ContentError, plugin: &Plugin, what: &str) -> (Outcome, McpError) {
    (error.outcome(), content_error(error, plugin, what))
}

/// A plugin's error reply to a read or a prompt get, its text held to
/// `limit`: `not_found` spells a `not-found` or `invalid-arguments`,
/// `failed` a `failed`. Text over the limit is an output-limit failure.
pub(crate) fn plugin_error(
    error: types::Error,
    limit: u64,
    (plugin, what): (&Plugin, &str),
    not_found: impl FnOnce(String) -> McpError,
    failed: impl FnOnce(String) -> McpError,
) -> (Outcome, McpError) {
    let (why, missing) = match error {
        types::Error::NotFound(why) | types::Error::InvalidArguments(why) => (why, true),
        types::Error::Failed(why) => (why, false),
    };
    match content::plugin_text(why, limit) {
        Ok(why) if missing => (Outcome::ToolError, not_found(why)),
        Ok(why) => (Outcome::ToolError, failed(why)),
        Err(error) => (Outcome::OutputLimit, content_error(&error, plugin, what)),
    }
}
