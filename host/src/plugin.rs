//! A loaded plugin: its prepared component, its limits, which parts of the
//! contract it exports, and the declarations it made at load.

use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::Component;

use crate::cache::CodeOrigin;
use crate::declarations::ToolDecl;
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
    pub exports: Exports,
    pub tools: Vec<ToolDecl>,
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

impl Plugin {
    pub fn manifest_name(&self) -> String {
        manifest_name(&self.component_path, self.manifest_path.as_deref())
    }

    /// Runs one tool call in a fresh sandbox. `arguments` is a JSON object.
    pub async fn call_tool(
        &self,
        runtime: &Runtime,
        tool: &str,
        arguments: String,
        call: CallContext,
    ) -> (Result<ToolReply, CallFailure>, CallReport) {
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

    /// Asks the plugin for its tools (done once, at load).
    pub async fn list_tools(
        runtime: &Runtime,
        prepared: &Prepared,
        indices: &tools::GuestIndices,
        call: CallContext,
    ) -> Result<Vec<types::Tool>, CallFailure> {
        runtime
            .invoke(prepared, call, async |store, instance| {
                let guest = indices.load(&mut *store, &instance)?;
                guest.call_list_tools(&mut *store).await
            })
            .await
            .0
    }
}
