//! Host-side bindings for each version of the `warden:plugin` contract in
//! `wit/`, one file per version holding everything that version needs:
//! its bindings, its `host` adapter, its linking and how its answers become
//! Warden's. Every version shares the latest version's `types` (a released
//! version only ever gains types), so the rest of Warden speaks one set of
//! types, and `Exports` is the one place that tells versions apart: a new
//! version is a new file and one arm per method here.
//!
//! Imports (the `host` interface) are synchronous: they only hand events to
//! the call's context. Exports are async so that a call can yield at epoch
//! ticks, be timed out and be cancelled.

mod host;
mod reply;
pub mod v0_1_0;
pub mod v0_2_0;
pub mod v0_3_0;

use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre, Linker};

pub use host::Host;
pub use reply::{Ask, PromptReply, ReadReply, Reply, Structured, ToolReply, ToolResult};
pub use v0_3_0::warden::plugin::host::{Interaction, LogLevel};
pub use v0_3_0::warden::plugin::types;

/// A completion's reference, as the latest version spells it.
pub type CompletionRef = v0_3_0::completions::Reference;

/// The versions this Warden serves, oldest first.
pub const VERSIONS: [&str; 3] = [v0_1_0::VERSION, v0_2_0::VERSION, v0_3_0::VERSION];

/// Links every served version's `host` interface, side by side.
pub fn add_to_linker<T: Host + 'static>(linker: &mut Linker<T>) -> anyhow::Result<()> {
    v0_1_0::add_to_linker(linker)?;
    v0_2_0::add_to_linker(linker)?;
    v0_3_0::add_to_linker(linker)
}

/// One of the contract's exported interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Tools,
    Resources,
    Prompts,
    Completions,
}

impl Interface {
    pub const ALL: [Interface; 4] = [Self::Tools, Self::Resources, Self::Prompts, Self::Completions];

    pub fn name(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Resources => "resources",
            Self::Prompts => "prompts",
            Self::Completions => "completions",
        }
    }
}

/// Which interfaces of the contract a component exports, through the
/// bindings of the version it was built against; resolved once.
#[derive(Default)]
pub enum Exports {
    /// None of the contract (a plain component).
    #[default]
    None,
    V0_1_0(v0_1_0::Exports),
    V0_2_0(v0_2_0::Exports),
    V0_3_0(v0_3_0::Exports),
}

impl Exports {
    /// Resolves the exports of a component built against `version` (a
    /// served one: anything else is read as the oldest).
    pub fn resolve<T>(version: &str, pre: &InstancePre<T>) -> Self {
        match version {
            v0_3_0::VERSION => Self::V0_3_0(v0_3_0::Exports::resolve(pre)),
            v0_2_0::VERSION => Self::V0_2_0(v0_2_0::Exports::resolve(pre)),
            _ => Self::V0_1_0(v0_1_0::Exports::resolve(pre)),
        }
    }

    /// Whether the component exports `interface`.
    pub fn has(&self, interface: Interface) -> bool {
        match self {
            Self::None => false,
            Self::V0_1_0(exports) => exports.has(interface),
            Self::V0_2_0(exports) => exports.has(interface),
            Self::V0_3_0(exports) => exports.has(interface),
        }
    }

    pub fn names(&self) -> Vec<&'static str> {
        Interface::ALL
            .into_iter()
            .filter(|interface| self.has(*interface))
            .map(Interface::name)
            .collect()
    }

    /// The contract version the exports speak (`None` when they export
    /// nothing of it, as a plain component).
    pub fn version(&self) -> Option<&'static str> {
        let version = match self {
            Self::None => return None,
            Self::V0_1_0(_) => v0_1_0::VERSION,
            Self::V0_2_0(_) => v0_2_0::VERSION,
            Self::V0_3_0(_) => v0_3_0::VERSION,
        };
        (!self.names().is_empty()).then_some(version)
    }

    /// `list-tools`; nothing when the component exports no tools.
    pub async fn list_tools<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::Tool>> {
        match self {
            Self::None => Ok(Vec::new()),
            Self::V0_1_0(exports) => exports.list_tools(store, instance).await,
            Self::V0_2_0(exports) => exports.list_tools(store, instance).await,
            Self::V0_3_0(exports) => exports.list_tools(store, instance).await,
        }
    }

    /// `list-tool-execution`: how each tool may run (tasks); nothing for
    /// versions before 0.3.0, whose tools never declare it.
    pub async fn list_tool_execution<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::ToolExecution>> {
        match self {
            Self::V0_3_0(exports) => exports.list_tool_execution(store, instance).await,
            Self::None | Self::V0_1_0(_) | Self::V0_2_0(_) => Ok(Vec::new()),
        }
    }

    /// `list-resources`; nothing when the component exports no resources.
    pub async fn list_resources<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::ResourceInfo>> {
        match self {
            Self::None => Ok(Vec::new()),
            Self::V0_1_0(exports) => exports.list_resources(store, instance).await,
            Self::V0_2_0(exports) => exports.list_resources(store, instance).await,
            Self::V0_3_0(exports) => exports.list_resources(store, instance).await,
        }
    }

    /// `list-resource-templates`; nothing when the component exports no resources.
    pub async fn list_resource_templates<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::ResourceTemplate>> {
        match self {
            Self::None => Ok(Vec::new()),
            Self::V0_1_0(exports) => exports.list_resource_templates(store, instance).await,
            Self::V0_2_0(exports) => exports.list_resource_templates(store, instance).await,
            Self::V0_3_0(exports) => exports.list_resource_templates(store, instance).await,
        }
    }

    /// `list-prompts`; nothing when the component exports no prompts.
    pub async fn list_prompts<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::Prompt>> {
        match self {
            Self::None => Ok(Vec::new()),
            Self::V0_1_0(exports) => exports.list_prompts(store, instance).await,
            Self::V0_2_0(exports) => exports.list_prompts(store, instance).await,
            Self::V0_3_0(exports) => exports.list_prompts(store, instance).await,
        }
    }

    /// `call-tool`. `arguments` is a JSON object, as text; `ask` handles an input-required
    /// reply (versions without interaction never give one).
    #[allow(clippy::too_many_arguments)]
    pub async fn call_tool<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        tool: &str,
        arguments: &types::Json,
        input: Option<&types::InputAnswers>,
        ask: Ask<'_, A>,
    ) -> wasmtime::Result<ToolReply<A>> {
        match self {
            Self::None => Err(not_exported(Interface::Tools)),
            Self::V0_1_0(exports) => exports.call_tool(store, instance, tool, arguments, input, ask).await,
            Self::V0_2_0(exports) => exports.call_tool(store, instance, tool, arguments, input, ask).await,
            Self::V0_3_0(exports) => exports.call_tool(store, instance, tool, arguments, input, ask).await,
        }
    }

    /// `read-resource`. `ask`: as for `call_tool`.
    pub async fn read_resource<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        uri: &str,
        input: Option<&types::InputAnswers>,
        ask: Ask<'_, A>,
    ) -> wasmtime::Result<ReadReply<A>> {
        match self {
            Self::None => Err(not_exported(Interface::Resources)),
            Self::V0_1_0(exports) => exports.read_resource(store, instance, uri, input, ask).await,
            Self::V0_2_0(exports) => exports.read_resource(store, instance, uri, input, ask).await,
            Self::V0_3_0(exports) => exports.read_resource(store, instance, uri, input, ask).await,
        }
    }

    /// `get-prompt`. `ask`: as for `call_tool`.
    #[allow(clippy::too_many_arguments)]
    pub async fn get_prompt<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        name: &str,
        arguments: &[(String, String)],
        input: Option<&types::InputAnswers>,
        ask: Ask<'_, A>,
    ) -> wasmtime::Result<PromptReply<A>> {
        match self {
            Self::None => Err(not_exported(Interface::Prompts)),
            Self::V0_1_0(exports) => exports.get_prompt(store, instance, name, arguments, input, ask).await,
            Self::V0_2_0(exports) => exports.get_prompt(store, instance, name, arguments, input, ask).await,
            Self::V0_3_0(exports) => exports.get_prompt(store, instance, name, arguments, input, ask).await,
        }
    }

    /// `complete`.
    pub async fn complete<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
    ) -> wasmtime::Result<Vec<String>> {
        match self {
            Self::None => Err(not_exported(Interface::Completions)),
            Self::V0_1_0(exports) => exports.complete(store, instance, reference, argument, value).await,
            Self::V0_2_0(exports) => exports.complete(store, instance, reference, argument, value).await,
            Self::V0_3_0(exports) => exports.complete(store, instance, reference, argument, value).await,
        }
    }
}

/// The indices of an interface a call needs; callers check `Exports::has`
/// first, so a missing one is a host bug, reported as the call's error.
fn exported<I>(indices: &Option<I>, interface: Interface) -> wasmtime::Result<&I> {
    indices.as_ref().ok_or_else(|| not_exported(interface))
}

fn not_exported(interface: Interface) -> wasmtime::Error {
    wasmtime::format_err!("the component exports no `{}` interface", interface.name())
}
