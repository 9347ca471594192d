//! A loaded plugin: its prepared component, its limits, which parts of the
//! contract it exports, and the declarations it made at load.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::Component;

use crate::declarations::{Declared, PromptDecl, ResourceDecl, TemplateDecl, ToolDecl};
use crate::plain::{self, PlainExports};
use warden_runtime::cache::CodeOrigin;
use warden_runtime::contract::{types, v0_1_0 as v1, v0_2_0 as v2};
use warden_runtime::{CallContext, CallFailure, CallReport, Prepared, Runtime};

/// Which interfaces of the contract the component exports, through the
/// adapter of the contract version it was built against; resolved once.
#[derive(Default)]
pub struct Exports {
    pub tools: Option<Versioned<v1::tools::GuestIndices, v2::tools::GuestIndices>>,
    pub resources: Option<Versioned<v1::resources::GuestIndices, v2::resources::GuestIndices>>,
    pub prompts: Option<Versioned<v1::prompts::GuestIndices, v2::prompts::GuestIndices>>,
    pub completions: Option<Versioned<v1::completions::GuestIndices, v2::completions::GuestIndices>>,
}

/// One export, as the contract version the plugin speaks has it.
pub enum Versioned<V1, V2> {
    V0_1(V1),
    V0_2(V2),
}

impl Exports {
    /// Resolves the exports of a component built against `version`.
    pub fn resolve(version: &str, pre: &wasmtime::component::InstancePre<warden_runtime::Sandbox>) -> Self {
        if version == v2::VERSION {
            Self {
                tools: v2::tools::GuestIndices::new(pre).ok().map(Versioned::V0_2),
                resources: v2::resources::GuestIndices::new(pre).ok().map(Versioned::V0_2),
                prompts: v2::prompts::GuestIndices::new(pre).ok().map(Versioned::V0_2),
                completions: v2::completions::GuestIndices::new(pre).ok().map(Versioned::V0_2),
            }
        } else {
            Self {
                tools: v1::tools::GuestIndices::new(pre).ok().map(Versioned::V0_1),
                resources: v1::resources::GuestIndices::new(pre).ok().map(Versioned::V0_1),
                prompts: v1::prompts::GuestIndices::new(pre).ok().map(Versioned::V0_1),
                completions: v1::completions::GuestIndices::new(pre).ok().map(Versioned::V0_1),
            }
        }
    }

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

    /// The contract version the exports speak (`None` for a plain component).
    pub fn version(&self) -> Option<&'static str> {
        let of = |v1: bool| if v1 { v1::VERSION } else { v2::VERSION };
        match (&self.tools, &self.resources, &self.prompts, &self.completions) {
            (Some(Versioned::V0_1(_)), ..)
            | (_, Some(Versioned::V0_1(_)), ..)
            | (_, _, Some(Versioned::V0_1(_)), _)
            | (.., Some(Versioned::V0_1(_))) => Some(of(true)),
            (None, None, None, None) => None,
            _ => Some(of(false)),
        }
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

/// A plugin's answer to one round of a call: done, or "I need input first"
/// (contract 0.2.0 and later). `A` is what the caller made of the requests
/// while the call still held its slot (see `Ask`).
#[derive(Debug)]
pub enum Reply<T, A = types::InputRequired> {
    Done(T),
    InputRequired(A),
}

/// Turns a plugin's "I need input first" into what the caller needs, inside
/// `Runtime::invoke`: while the call holds its concurrency slot and runs
/// under its time limit, so the host's work on the plugin's requests is
/// bounded like the plugin's own.
pub type Ask<'a, A> = &'a (dyn Fn(types::InputRequired) -> A + Sync);

impl<A> Reply<types::CallResult, A> {
    fn of_tool(reply: types::ToolReply, ask: Ask<'_, A>) -> Self {
        match reply {
            types::ToolReply::Done(result) => Reply::Done(result),
            types::ToolReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }
    }
}

impl<A> Reply<Vec<types::ResourceContents>, A> {
    fn of_read(reply: types::ReadReply, ask: Ask<'_, A>) -> Self {
        match reply {
            types::ReadReply::Done(contents) => Reply::Done(contents),
            types::ReadReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }
    }
}

impl<A> Reply<types::PromptResult, A> {
    fn of_prompt(reply: types::PromptReply, ask: Ask<'_, A>) -> Self {
        match reply {
            types::PromptReply::Done(result) => Reply::Done(result),
            types::PromptReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }
    }
}

pub type ToolReply<A> = Result<Reply<types::CallResult, A>, types::Error>;
pub type ReadReply<A> = Result<Reply<Vec<types::ResourceContents>, A>, types::Error>;
pub type PromptReply<A> = Result<Reply<types::PromptResult, A>, types::Error>;
pub type CompletionRef = v2::completions::Reference;

/// The same reference, as 0.1.0 spells it.
fn completion_ref_v1(reference: &CompletionRef) -> v1::completions::Reference {
    match reference {
        CompletionRef::Prompt(name) => v1::completions::Reference::Prompt(name.clone()),
        CompletionRef::ResourceTemplate(uri) => v1::completions::Reference::ResourceTemplate(uri.clone()),
    }
}

impl Plugin {
    pub fn manifest_name(&self) -> String {
        manifest_name(&self.component_path, self.manifest_path.as_deref())
    }

    /// Runs one tool call in a fresh sandbox. `arguments` is a JSON object
    /// and its text (serialised once by the caller, not once per round; a
    /// `String`, as the bindings take it); `ask` handles an input-required
    /// reply before the call gives up its slot.
    pub async fn call_tool<A: Send>(
        &self,
        runtime: &Runtime,
        tool: &str,
        (value, arguments): (&serde_json::Value, &String),
        input: Option<&types::InputAnswers>,
        call: CallContext,
        ask: Ask<'_, A>,
    ) -> (Result<ToolReply<A>, CallFailure>, CallReport) {
        if let Some(plain) = &self.plain {
            return self.call_function(runtime, plain, tool, value, call).await;
        }
        let tool = tool.to_string();
        let indices = self
            .exports
            .tools
            .as_ref()
            .expect("a plugin with tools exports the tools interface");
        runtime
            .invoke(&self.prepared, call, async |store, instance| match indices {
                Versioned::V0_1(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    let reply = guest.call_call_tool(&mut *store, &tool, arguments).await?;
                    Ok(reply.map(Reply::Done))
                }
                Versioned::V0_2(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    let reply = guest.call_call_tool(&mut *store, &tool, arguments, input).await?;
                    Ok(reply.map(|reply| Reply::of_tool(reply, ask)))
                }
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
    async fn call_function<A>(
        &self,
        runtime: &Runtime,
        plain: &PlainExports,
        tool: &str,
        arguments: &serde_json::Value,
        call: CallContext,
    ) -> (Result<ToolReply<A>, CallFailure>, CallReport) {
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
        let Some(indices) = self.exports.resources.as_ref() else {
            return (
                Err(CallFailure::Unavailable("it exports no resources".into())),
                CallReport::default(),
            );
        };
        runtime
            .invoke(&self.prepared, call, async |store, instance| match indices {
                Versioned::V0_1(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    Ok(guest.call_read_resource(&mut *store, uri).await?.map(Reply::Done))
                }
                Versioned::V0_2(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    let reply = guest.call_read_resource(&mut *store, uri, input).await?;
                    Ok(reply.map(|reply| Reply::of_read(reply, ask)))
                }
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
        let Some(indices) = self.exports.prompts.as_ref() else {
            return (
                Err(CallFailure::Unavailable("it exports no prompts".into())),
                CallReport::default(),
            );
        };
        runtime
            .invoke(&self.prepared, call, async |store, instance| match indices {
                Versioned::V0_1(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    Ok(guest
                        .call_get_prompt(&mut *store, name, arguments)
                        .await?
                        .map(Reply::Done))
                }
                Versioned::V0_2(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    let reply = guest.call_get_prompt(&mut *store, name, arguments, input).await?;
                    Ok(reply.map(|reply| Reply::of_prompt(reply, ask)))
                }
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
            .invoke(&self.prepared, call, async |store, instance| match indices {
                Versioned::V0_1(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    guest
                        .call_complete(&mut *store, &completion_ref_v1(reference), argument, value)
                        .await
                }
                Versioned::V0_2(indices) => {
                    let guest = indices.load(&mut *store, &instance)?;
                    guest.call_complete(&mut *store, reference, argument, value).await
                }
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
                match &exports.tools {
                    Some(Versioned::V0_1(indices)) => {
                        declared.tools = indices
                            .load(&mut *store, &instance)?
                            .call_list_tools(&mut *store)
                            .await?;
                    }
                    Some(Versioned::V0_2(indices)) => {
                        declared.tools = indices
                            .load(&mut *store, &instance)?
                            .call_list_tools(&mut *store)
                            .await?;
                    }
                    None => {}
                }
                step = "`list-resources`";
                match &exports.resources {
                    Some(Versioned::V0_1(indices)) => {
                        let guest = indices.load(&mut *store, &instance)?;
                        declared.resources = guest.call_list_resources(&mut *store).await?;
                        step = "`list-resource-templates`";
                        declared.templates = guest.call_list_resource_templates(&mut *store).await?;
                    }
                    Some(Versioned::V0_2(indices)) => {
                        let guest = indices.load(&mut *store, &instance)?;
                        declared.resources = guest.call_list_resources(&mut *store).await?;
                        step = "`list-resource-templates`";
                        declared.templates = guest.call_list_resource_templates(&mut *store).await?;
                    }
                    None => {}
                }
                step = "`list-prompts`";
                match &exports.prompts {
                    Some(Versioned::V0_1(indices)) => {
                        declared.prompts = indices
                            .load(&mut *store, &instance)?
                            .call_list_prompts(&mut *store)
                            .await?;
                    }
                    Some(Versioned::V0_2(indices)) => {
                        declared.prompts = indices
                            .load(&mut *store, &instance)?
                            .call_list_prompts(&mut *store)
                            .await?;
                    }
                    None => {}
                }
                Ok(declared)
            })
            .await
            .0;
        result.map_err(|failure| (failure, step))
    }
}
