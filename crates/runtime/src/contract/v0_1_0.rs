//! `warden:plugin@0.1.0` (`wit/v0.1.0/plugin.wit`): tools, resources, prompts
//! and completions, no interaction. Its types are the latest version's
//! (bindgen's `with:`), so its answers need no converting.

use anyhow::Context;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre, Linker};

use super::host::{AsHost, HostView};
use super::{Ask, CompletionRef, Interface, LogLevel, PromptReply, ReadReply, Reply, ToolReply, types};

pub const VERSION: &str = "0.1.0";

wasmtime::component::bindgen!({
    path: "../../wit/v0.1.0",
    world: "warden:plugin/plugin",
    exports: { default: async },
    with: {
        "warden:plugin/types": super::v0_3_0::warden::plugin::types,
    },
});

pub use exports::warden::plugin::{completions, prompts, resources, tools};
use warden::plugin::host;

/// Links 0.1.0's `host` interface for stores whose data is a `super::Host`.
pub fn add_to_linker<T: super::Host + 'static>(linker: &mut Linker<T>) -> anyhow::Result<()> {
    Plugin::add_to_linker::<T, AsHost<T>>(linker, |data: &mut T| HostView(data))
        .map_err(anyhow::Error::from)
        .context("cannot link the host interface (0.1.0)")
}

/// 0.1.0's `host`: the latest one without `can-ask`.
impl<T: super::Host> host::Host for HostView<'_, T> {
    fn log(&mut self, level: host::LogLevel, message: String) {
        use host::LogLevel as V1;
        let level = match level {
            V1::Debug => LogLevel::Debug,
            V1::Info => LogLevel::Info,
            V1::Notice => LogLevel::Notice,
            V1::Warning => LogLevel::Warning,
            V1::Error => LogLevel::Error,
            V1::Critical => LogLevel::Critical,
            V1::Alert => LogLevel::Alert,
            V1::Emergency => LogLevel::Emergency,
        };
        self.0.log(level, message);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.0.progress(progress, total, message);
    }

    fn cancelled(&mut self) -> bool {
        self.0.cancelled()
    }
}

/// What a 0.1.0 component exports of the contract.
pub struct Exports {
    tools: Option<tools::GuestIndices>,
    resources: Option<resources::GuestIndices>,
    prompts: Option<prompts::GuestIndices>,
    completions: Option<completions::GuestIndices>,
}

/// The same reference, as 0.1.0 spells it.
fn completion_ref(reference: &CompletionRef) -> completions::Reference {
    match reference {
        CompletionRef::Prompt(name) => completions::Reference::Prompt(name.clone()),
        CompletionRef::ResourceTemplate(uri) => completions::Reference::ResourceTemplate(uri.clone()),
    }
}

impl Exports {
    pub fn resolve<T>(pre: &InstancePre<T>) -> Self {
        Self {
            tools: tools::GuestIndices::new(pre).ok(),
            resources: resources::GuestIndices::new(pre).ok(),
            prompts: prompts::GuestIndices::new(pre).ok(),
            completions: completions::GuestIndices::new(pre).ok(),
        }
    }

    pub fn has(&self, interface: Interface) -> bool {
        match interface {
            Interface::Tools => self.tools.is_some(),
            Interface::Resources => self.resources.is_some(),
            Interface::Prompts => self.prompts.is_some(),
            Interface::Completions => self.completions.is_some(),
        }
    }

    pub async fn list_tools<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::Tool>> {
        match &self.tools {
            Some(indices) => indices.load(&mut *store, instance)?.call_list_tools(&mut *store).await,
            None => Ok(Vec::new()),
        }
    }

    pub async fn list_resources<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::ResourceInfo>> {
        match &self.resources {
            Some(indices) => {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_list_resources(&mut *store).await
            }
            None => Ok(Vec::new()),
        }
    }

    pub async fn list_resource_templates<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::ResourceTemplate>> {
        match &self.resources {
            Some(indices) => {
                let guest = indices.load(&mut *store, instance)?;
                guest.call_list_resource_templates(&mut *store).await
            }
            None => Ok(Vec::new()),
        }
    }

    pub async fn list_prompts<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<Vec<types::Prompt>> {
        match &self.prompts {
            Some(indices) => {
                indices
                    .load(&mut *store, instance)?
                    .call_list_prompts(&mut *store)
                    .await
            }
            None => Ok(Vec::new()),
        }
    }

    /// 0.1.0 has no interaction: `input` and `ask` are never used.
    #[allow(clippy::too_many_arguments)]
    pub async fn call_tool<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        tool: &str,
        arguments: &types::Json,
        _input: Option<&types::InputAnswers>,
        _ask: Ask<'_, A>,
    ) -> wasmtime::Result<ToolReply<A>> {
        let guest = super::exported(&self.tools, Interface::Tools)?.load(&mut *store, instance)?;
        let reply = guest.call_call_tool(&mut *store, tool, arguments).await?;
        Ok(reply.map(|result| Reply::Done(result.into())))
    }

    pub async fn read_resource<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        uri: &str,
        _input: Option<&types::InputAnswers>,
        _ask: Ask<'_, A>,
    ) -> wasmtime::Result<ReadReply<A>> {
        let guest = super::exported(&self.resources, Interface::Resources)?.load(&mut *store, instance)?;
        Ok(guest.call_read_resource(&mut *store, uri).await?.map(Reply::Done))
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn get_prompt<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        name: &str,
        arguments: &[(String, String)],
        _input: Option<&types::InputAnswers>,
        _ask: Ask<'_, A>,
    ) -> wasmtime::Result<PromptReply<A>> {
        let guest = super::exported(&self.prompts, Interface::Prompts)?.load(&mut *store, instance)?;
        Ok(guest
            .call_get_prompt(&mut *store, name, arguments)
            .await?
            .map(Reply::Done))
    }

    pub async fn complete<T: Send>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
    ) -> wasmtime::Result<Vec<String>> {
        let guest = super::exported(&self.completions, Interface::Completions)?.load(&mut *store, instance)?;
        guest
            .call_complete(&mut *store, &completion_ref(reference), argument, value)
            .await
    }
}
