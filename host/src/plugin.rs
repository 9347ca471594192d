//! A loaded plugin: its prepared component, its limits, which parts of the
//! contract it exports, and the declarations it made at load.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::Component;

use crate::cache::CodeOrigin;
use crate::declarations::{PromptDecl, ResourceDecl, TemplateDecl, ToolDecl};
use crate::plain::{self, PlainExports};
use crate::runtime::bindings::{completions, prompts, resources, tools, types};
use crate::runtime::{CallContext, CallFailure, CallReport, Prepared, Runtime};

/// Which interfaces of the contract the component exports, resolved once.
#[derive(Default)]
pub struct Exports {
    pub tools: Option<tools::GuestIndices>,
    pub resources: Option<resources::GuestIndices>,
    pub prompts: Option<prompts::GuestIndices>,
    pub completions: Option<completions::GuestIndices>,
}

impl Exports {
    pub fn names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.tools.is_some() {
            names.push("tools");
        }
        if self.resources.is_some() {
            names.push("resources");
        }
        if self.prompts.is_some() {
            names.push("prompts");
        }
        if self.completions.is_some() {
            names.push("completions");
        }
        names
    }
}

pub struct Plugin {
    pub name: Arc<str>,
    pub component_path: PathBuf,
    pub manifest_path: Option<PathBuf>,
    pub sha256: String,
    /// The compiled code, kept so a manifest-only change can make a new
    /// `Prepared` without compiling again.
    pub component: Component,
    /// Where `component` came from at this load.
    pub code: CodeOrigin,
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

/// Everything a plugin declares at load, as it answered.
#[derive(Default)]
pub struct Declared {
    pub tools: Vec<types::Tool>,
    pub resources: Vec<types::ResourceInfo>,
    pub templates: Vec<types::ResourceTemplate>,
    pub prompts: Vec<types::Prompt>,
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

pub type ToolReply = Result<types::CallResult, types::Error>;
pub type ReadReply = Result<Vec<types::ResourceContents>, types::Error>;
pub type PromptReply = Result<types::PromptResult, types::Error>;
pub use completions::Reference as CompletionRef;

impl Plugin {
    pub fn manifest_name(&self) -> String {
        manifest_name(&self.component_path, self.manifest_path.as_deref())
    }

    /// Runs one tool call in a fresh sandbox. `arguments` is a JSON object.
    pub async fn call_tool(
        &self,
        runtime: &Runtime,
        tool: &str,
        arguments: &serde_json::Value,
        call: CallContext,
    ) -> (Result<ToolReply, CallFailure>, CallReport) {
        if let Some(plain) = &self.plain {
            return self.call_function(runtime, plain, tool, arguments, call).await;
        }
        let arguments = arguments.to_string();
        let tool = tool.to_string();
        let indices = self
            .exports
            .tools
            .as_ref()
            .expect("a plugin with tools exports the tools interface");
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let guest = indices.load(&mut *store, &instance)?;
                guest.call_call_tool(&mut *store, &tool, &arguments).await
            })
            .await
    }

    /// Checks that `arguments` (which matched the tool's schema) can become
    /// the parameters of a plain component's function; contract plugins
    /// check their own.
    pub fn check_arguments(&self, tool: &str, arguments: &serde_json::Value) -> Result<(), String> {
        match self.plain.as_ref().and_then(|plain| plain.function(tool)) {
            Some(function) => plain::arguments(function, arguments).map(drop),
            None => Ok(()),
        }
    }

    /// Calls one function of a plain component in a fresh sandbox. Arguments
    /// that cannot become its parameters are refused before any sandbox
    /// exists.
    async fn call_function(
        &self,
        runtime: &Runtime,
        plain: &PlainExports,
        tool: &str,
        arguments: &serde_json::Value,
        call: CallContext,
    ) -> (Result<ToolReply, CallFailure>, CallReport) {
        let Some(function) = plain.function(tool) else {
            return (
                Ok(Err(types::Error::NotFound(format!("tool `{tool}`")))),
                CallReport::default(),
            );
        };
        let params = match plain::arguments(function, arguments) {
            Ok(params) => params,
            Err(why) => return (Ok(Err(types::Error::InvalidArguments(why))), CallReport::default()),
        };
        let (returned, report) = runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let func = instance
                    .get_func(&mut *store, function.export)
                    .ok_or_else(|| wasmtime::format_err!("`{}` is not exported", function.export_name))?;
                let mut results = vec![wasmtime::component::Val::Bool(false); usize::from(function.result.is_some())];
                func.call_async(&mut *store, &params, &mut results).await?;
                Ok(results.pop())
            })
            .await;
        (returned.map(|value| plain::reply(function, value)), report)
    }

    /// Reads one resource in a fresh sandbox. Only called for a plugin that
    /// declared the URI (or a template matching it).
    pub async fn read_resource(
        &self,
        runtime: &Runtime,
        uri: &str,
        call: CallContext,
    ) -> (Result<ReadReply, CallFailure>, CallReport) {
        let Some(indices) = self.exports.resources.as_ref() else {
            return (
                Err(CallFailure::Unavailable("it exports no resources".into())),
                CallReport::default(),
            );
        };
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let guest = indices.load(&mut *store, &instance)?;
                guest.call_read_resource(&mut *store, uri).await
            })
            .await
    }

    /// Renders one prompt in a fresh sandbox.
    pub async fn get_prompt(
        &self,
        runtime: &Runtime,
        name: &str,
        arguments: &[(String, String)],
        call: CallContext,
    ) -> (Result<PromptReply, CallFailure>, CallReport) {
        let Some(indices) = self.exports.prompts.as_ref() else {
            return (
                Err(CallFailure::Unavailable("it exports no prompts".into())),
                CallReport::default(),
            );
        };
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let guest = indices.load(&mut *store, &instance)?;
                guest.call_get_prompt(&mut *store, name, arguments).await
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
        let Some(indices) = self.exports.completions.as_ref() else {
            return (Ok(Vec::new()), CallReport::default());
        };
        runtime
            .invoke(&self.prepared, call, async |store, instance| {
                let guest = indices.load(&mut *store, &instance)?;
                guest.call_complete(&mut *store, reference, argument, value).await
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
                let mut declared = Declared::default();
                if let Some(indices) = &exports.tools {
                    declared.tools = indices
                        .load(&mut *store, &instance)?
                        .call_list_tools(&mut *store)
                        .await?;
                }
                if let Some(indices) = &exports.resources {
                    step = "`list-resources`";
                    let guest = indices.load(&mut *store, &instance)?;
                    declared.resources = guest.call_list_resources(&mut *store).await?;
                    step = "`list-resource-templates`";
                    declared.templates = guest.call_list_resource_templates(&mut *store).await?;
                }
                if let Some(indices) = &exports.prompts {
                    step = "`list-prompts`";
                    declared.prompts = indices
                        .load(&mut *store, &instance)?
                        .call_list_prompts(&mut *store)
                        .await?;
                }
                Ok(declared)
            })
            .await
            .0;
        result.map_err(|failure| (failure, step))
    }
}
