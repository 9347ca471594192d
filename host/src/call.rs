//! `warden call`: runs one tool of a plugin without a client, under its
//! manifest, exactly as a client's `tools/call` would, and prints the MCP
//! result as JSON on stdout.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use serde_json::Value;

use crate::cli::CallArgs;
use crate::plugin_at::{UNUSABLE, plugin_source};
use crate::serve::open_cache;
use rmcp::model::CallToolResponse;
use warden_mcp::interaction::{self, Asker, Retry, Wire};
use warden_mcp::tool_call;
use warden_plugins::loader::Loader;
use warden_runtime::audit::Outcome;
use warden_runtime::{Asks, CallContext, Runtime};

/// Exit codes: 0 a result, 1 an `isError` result, 2 nothing ran
/// ([`UNUSABLE`]).
pub const TOOL_ERROR: u8 = 1;

pub async fn run(args: &CallArgs) -> Result<ExitCode> {
    let arguments = match parse_arguments(args.arguments.as_deref()) {
        Ok(arguments) => arguments,
        Err(why) => return Ok(unusable(&why)),
    };
    let (source, root) = match plugin_source(&args.plugin) {
        Ok(found) => found,
        Err(error) => return Ok(unusable(&format!("{error:#}"))),
    };
    let loader = Loader::new(Runtime::new()?, open_cache(&args.cache), &[root], Default::default());
    let plugin = match loader.load(&source, &[]).await {
        Ok(plugin) => Arc::new(plugin),
        Err(error) => {
            return Ok(unusable(&format!(
                "cannot load {}: {error:#}",
                source.component.display()
            )));
        }
    };
    let Some(decl) = plugin.tools.iter().find(|t| t.tool.name == args.tool) else {
        let names: Vec<&str> = plugin.tools.iter().map(|t| t.tool.name.as_ref()).collect();
        return Ok(unusable(&format!(
            "plugin `{}` has no tool `{}`; its tools: {}",
            plugin.name,
            args.tool,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    };
    // No client: whatever the plugin asks for is answered `refused`.
    let codec = interaction::process_codec()?;
    let used = interaction::UsedStates::default();
    let asker = Asker {
        wire: Wire::Detached,
        client: Asks::default(),
        grant: &plugin.prepared.settings.grants.interaction,
        codec: &codec,
        cancel: Default::default(),
        timeout: plugin.prepared.settings.limits.timeout,
        output: plugin.prepared.settings.limits.output,
        manifest: plugin.manifest_name(),
        caller: String::new(),
        used: &used,
    };
    let retry = Retry {
        responses: None,
        state: None,
    };
    let call = tool_call::run(
        loader.runtime(),
        &plugin,
        decl,
        &args.tool,
        &tool_call::Arguments::new(arguments),
        CallContext::detached(plugin.name.clone()),
        Instant::now(),
        &asker,
        retry,
    )
    .await;
    let result = match call.answer {
        Ok(CallToolResponse::Complete(result)) => result,
        Ok(_) => return Ok(unusable("the plugin asked for input, and there is no client to ask")),
        Err(error) => return Ok(unusable(&error.message)),
    };
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(ExitCode::from(match call.outcome {
        Outcome::Rejected => UNUSABLE,
        _ if result.is_error == Some(true) => TOOL_ERROR,
        _ => 0,
    }))
}

/// The arguments: a JSON object, `{}` when none are given.
fn parse_arguments(text: Option<&str>) -> Result<Value, String> {
    let Some(text) = text else {
        return Ok(Value::Object(Default::default()));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, like '{{\"name\": \"Ada\"}}', not {other}"
        )),
        Err(error) => Err(format!("the arguments are not JSON ({error}): {text}")),
    }
}

fn unusable(why: &str) -> ExitCode {
    tracing::error!("{why}");
    ExitCode::from(UNUSABLE)
}
