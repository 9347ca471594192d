//! A loaded plugin: its prepared component, its limits, which parts of the
//! contract it exports, and the declarations it made at load.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::{Component, Val};

use crate::declarations::{Declared, PromptDecl, ResourceDecl, TemplateDecl, ToolDecl};
use crate::plain::{self, PlainExports};
pub use warden_origin::Verified;
use warden_runtime::cache::CodeOrigin;
use warden_runtime::component_shape::ComponentShape;
use warden_runtime::contract::{Exports, Interface, types};
use warden_runtime::secrets::Redactor;
use warden_runtime::{CallContext, CallFailure, CallReport, Prepared, Runtime};

pub use warden_runtime::contract::{Ask, CompletionRef, PromptReply, ReadReply, Reply, ToolReply};

pub struct Plugin {
    pub name: Arc<str>,
    pub component_path: PathBuf,
    pub manifest_path: Option<PathBuf>,
    /// Its files as they were when this version was loaded: for a bare
    /// `name.wasm`, an event that changed neither (a write's events arriving
    /// in two batches, a rescan) does not load it again.
    pub files: crate::discovery::FilesStamp,
    pub sha256: String,
    /// Where a pulled component came from, as checked at this load.
    pub origin: Option<Arc<Verified>>,
    /// The compiled code, kept so a manifest-only change can make a new
    /// `Prepared` without compiling again.
    pub component: Component,
    /// Where `component` came from at this load.
    pub code: CodeOrigin,
    /// What it asks of the instance pool, read before compiling.
    pub shape: ComponentShape,
    pub prepared: Prepared,
    /// What it exports of the contract (nothing, for a plain component).
    pub exports: Exports,
    /// The functions of a plain component, served as its tools.
    pub plain: Option<PlainExports>,
    pub tools: Vec<ToolDecl>,
    pub resources: Vec<ResourceDecl>,
    pub templates: Vec<TemplateDecl>,
    pub prompts: Vec<PromptDecl>,
}

/// The file name of a plugin's manifest (which may not exist yet), as
/// error messages name it: `notes.toml`, or `notes/plugin.toml`.
pub fn manifest_name(component: &std::path::Path, manifest: Option<&std::path::Path>) -> String {
    let path = manifest.map_or_else(|| component.with_extension("toml"), |m| m.to_path_buf());
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match (file.as_str(), path.parent().and_then(|p| p.file_name())) {
        ("plugin.toml", Some(folder)) => format!("{}/plugin.toml", folder.to_string_lossy()),
        _ => file,
    }
}

/// A tool call's arguments as `call_tool` takes them: the JSON object, its
/// text (serialised once by the caller, not once per round; a `String`, as
/// the bindings take it) and, for a plain component, its function's
/// parameters when `check_arguments` has converted them already.
#[derive(Clone, Copy)]
pub struct ToolArguments<'a> {
    pub value: &'a serde_json::Value,
    pub json: &'a String,
    pub plain: Option<&'a [Val]>,
}

impl Plugin {
    /// Whether it runs on the fuel-counting engine (`[limits] fuel`).
    pub fn metered(&self) -> bool {
        self.prepared.settings.limits.fuel.is_some()
    }

    pub fn manifest_name(&self) -> String {
        manifest_name(&self.component_path, self.manifest_path.as_deref())
    }

    /// What this load's secrets are redacted with (see `warden_runtime::secrets`).
    pub fn redactor(&self) -> &Arc<Redactor> {
        &self.prepared.settings.redactor
    }

    /// Runs one tool call in a fresh sandbox; `ask` handles an input-required
    /// reply before the call gives up its slot.
    pub async fn call_tool<A: Send>(
        &self,
        runtime: &Runtime,
        tool: &str,
        arguments: ToolArguments<'_>,
        input: Option<&types::InputAnswers>,
        call: CallContext,
        ask: Ask<'_, A>,
    ) -> (Result<ToolReply<A>, CallFailure>, CallReport) {
        if let Some(plain) = &self.plain {
            return self.call_function(runtime, plain, tool, arguments, call).await;
        }
        assert!(
            self.exports.has(Interface::Tools),
            "a plugin with tools exports the tools interface"
        );
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                self.exports
                    .call_tool(store, &instance, tool, arguments.json, input, ask)
                    .await
            })
            .await
    }

    /// Checks that `arguments` (which matched the tool's schema) can become
    /// the parameters of a plain component's function, and returns them so
    /// that the call does not convert them again; contract plugins check
    /// their own (`None`).
    pub fn check_arguments(&self, tool: &str, arguments: &serde_json::Value) -> Result<Option<Vec<Val>>, String> {
        match self.plain.as_ref().and_then(|plain| plain.function(tool)) {
            Some(function) => plain::arguments(function, arguments).map(Some),
            None => Ok(None),
        }
    }

    /// Calls one function of a plain component in a fresh sandbox. Arguments
    /// that cannot become its parameters are refused before any sandbox
    /// exists.
    async fn call_function<A>(
        &self,
        runtime: &Runtime,
        plain: &PlainExports,
        tool: &str,
        arguments: ToolArguments<'_>,
        call: CallContext,
    ) -> (Result<ToolReply<A>, CallFailure>, CallReport) {
        let Some(function) = plain.function(tool) else {
            return (
                Ok(Err(types::Error::NotFound(format!("tool `{tool}`")))),
                CallReport::default(),
            );
        };
        let converted;
        let params = match arguments.plain {
            Some(params) => params,
            None => match plain::arguments(function, arguments.value) {
                Ok(params) => {
                    converted = params;
                    &converted
                }
                Err(why) => return (Ok(Err(types::Error::InvalidArguments(why))), CallReport::default()),
            },
        };
        let (returned, report) = runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let func = instance
                    .get_func(&mut *store, function.export)
                    .ok_or_else(|| wasmtime::format_err!("`{}` is not exported", function.export_name))?;
                let mut results = vec![wasmtime::component::Val::Bool(false); usize::from(function.result.is_some())];
                func.call_async(&mut *store, params, &mut results).await?;
                Ok(results.pop())
            })
            .await;
        (
            returned.map(|value| plain::reply(function, value).map(Reply::Done)),
            report,
        )
    }

    /// Reads one resource in a fresh sandbox. Only called for a plugin that
    /// declared the URI (or a template matching it). `ask`: as for `call_tool`.
    pub async fn read_resource<A: Send>(
        &self,
        runtime: &Runtime,
        uri: &str,
        input: Option<&types::InputAnswers>,
        call: CallContext,
        ask: Ask<'_, A>,
    ) -> (Result<ReadReply<A>, CallFailure>, CallReport) {
        if !self.exports.has(Interface::Resources) {
            return (
                Err(CallFailure::Unavailable("it exports no resources".into())),
                CallReport::default(),
            );
        }
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                self.exports.read_resource(store, &instance, uri, input, ask).await
            })
            .await
    }

    /// Renders one prompt in a fresh sandbox. `ask`: as for `call_tool`.
    pub async fn get_prompt<A: Send>(
        &self,
        runtime: &Runtime,
        name: &str,
        arguments: &[(String, String)],
        input: Option<&types::InputAnswers>,
        call: CallContext,
        ask: Ask<'_, A>,
    ) -> (Result<PromptReply<A>, CallFailure>, CallReport) {
        if !self.exports.has(Interface::Prompts) {
            return (
                Err(CallFailure::Unavailable("it exports no prompts".into())),
                CallReport::default(),
            );
        }
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                self.exports
                    .get_prompt(store, &instance, name, arguments, input, ask)
                    .await
            })
            .await
    }

    /// Asks for completions; a plugin without the `completions` export has none.
    pub async fn complete(
        &self,
        runtime: &Runtime,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        call: CallContext,
    ) -> (Result<Vec<String>, CallFailure>, CallReport) {
        if !self.exports.has(Interface::Completions) {
            return (Ok(Vec::new()), CallReport::default());
        }
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                self.exports
                    .complete(store, &instance, reference, argument, value)
                    .await
            })
            .await
    }

    /// Asks the plugin what it offers (done once, at load, in one sandbox).
    pub async fn declared(
        runtime: &Runtime,
        prepared: &Prepared,
        exports: &Exports,
        call: CallContext,
    ) -> Result<Declared, (CallFailure, &'static str)> {
        let mut step = "`list-tools`";
        let result = runtime
            .invoke(prepared, call, async |store, instance| {
                let tools = exports.list_tools(store, &instance).await?;
                step = "`list-tool-execution`";
                let executions = exports.list_tool_execution(store, &instance).await?;
                step = "`list-resources`";
                let resources = exports.list_resources(store, &instance).await?;
                step = "`list-resource-templates`";
                let templates = exports.list_resource_templates(store, &instance).await?;
                step = "`list-prompts`";
                let prompts = exports.list_prompts(store, &instance).await?;
                Ok(Declared {
                    tools,
                    executions,
                    resources,
                    templates,
                    prompts,
                })
            })
            .await
            .0;
        result.map_err(|failure| (failure, step))
    }
}
