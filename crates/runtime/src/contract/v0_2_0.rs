//! `warden:plugin@0.2.0` (`wit/v0.2.0/plugin.wit`): 0.1.0 plus interaction —
//! a call may answer `input-required` and is called again with the answers.
//! Its types are the latest version's (bindgen's `with:`).

use anyhow::Context;
use wasmtime::Store;
use wasmtime::component::{Instance, InstancePre, Linker};

use super::host::{AsHost, HostView};
use super::{Ask, CompletionRef, Interaction, Interface, LogLevel, PromptReply, ReadReply, Reply, ToolReply};

pub const VERSION: &str = "0.2.0";

wasmtime::component::bindgen!({
    path: "../../wit/v0.2.0",
    world: "warden:plugin/plugin",
    exports: { default: async },
    with: {
        "warden:plugin/types": super::v0_3_0::warden::plugin::types,
    },
});

use super::types;
pub use exports::warden::plugin::{completions, prompts, resources, tools};
use warden::plugin::host;

/// Links 0.2.0's `host` interface for stores whose data is a `super::Host`.
pub fn add_to_linker<T: super::Host + 'static>(linker: &mut Linker<T>) -> anyhow::Result<()> {
    Plugin::add_to_linker::<T, AsHost<T>>(linker, |data: &mut T| HostView(data))
        .map_err(anyhow::Error::from)
        .context("cannot link the host interface (0.2.0)")
}

/// 0.2.0's `host`: the latest one, its enums spelt in 0.2.0's bindings.
impl<T: super::Host> host::Host for HostView<'_, T> {
    fn log(&mut self, level: host::LogLevel, message: String) {
        use host::LogLevel as V2;
        let level = match level {
            V2::Debug => LogLevel::Debug,
            V2::Info => LogLevel::Info,
            V2::Notice => LogLevel::Notice,
            V2::Warning => LogLevel::Warning,
            V2::Error => LogLevel::Error,
            V2::Critical => LogLevel::Critical,
            V2::Alert => LogLevel::Alert,
            V2::Emergency => LogLevel::Emergency,
        };
        self.0.log(level, message);
    }

    fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.0.progress(progress, total, message);
    }

    fn cancelled(&mut self) -> bool {
        self.0.cancelled()
    }

    fn can_ask(&mut self, what: host::Interaction) -> bool {
        use host::Interaction as V2;
        self.0.can_ask(match what {
            V2::ElicitForm => Interaction::ElicitForm,
            V2::ElicitUrl => Interaction::ElicitUrl,
            V2::Sample => Interaction::Sample,
            V2::SampleWithTools => Interaction::SampleWithTools,
            V2::ListRoots => Interaction::ListRoots,
        })
    }
}

/// What a 0.2.0 component exports of the contract.
pub struct Exports {
    tools: Option<tools::GuestIndices>,
    resources: Option<resources::GuestIndices>,
    prompts: Option<prompts::GuestIndices>,
    completions: Option<completions::GuestIndices>,
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
        let guest = super::exported(&self.tools, Interface::Tools)?.load(&mut *store, instance)?;
        let reply = guest.call_call_tool(&mut *store, tool, arguments, input).await?;
        Ok(reply.map(|reply| match reply {
            types::ToolReply::Done(result) => Reply::Done(result.into()),
            types::ToolReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }))
    }

    pub async fn read_resource<T: Send, A>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
        uri: &str,
        input: Option<&types::InputAnswers>,
        ask: Ask<'_, A>,
    ) -> wasmtime::Result<ReadReply<A>> {
        let guest = super::exported(&self.resources, Interface::Resources)?.load(&mut *store, instance)?;
        let reply = guest.call_read_resource(&mut *store, uri, input).await?;
        Ok(reply.map(|reply| match reply {
            types::ReadReply::Done(contents) => Reply::Done(contents),
            types::ReadReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }))
    }

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
        let guest = super::exported(&self.prompts, Interface::Prompts)?.load(&mut *store, instance)?;
        let reply = guest.call_get_prompt(&mut *store, name, arguments, input).await?;
        Ok(reply.map(|reply| match reply {
            types::PromptReply::Done(result) => Reply::Done(result),
            types::PromptReply::InputRequired(asked) => Reply::InputRequired(ask(asked)),
        }))
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
        let reference = match reference {
            CompletionRef::Prompt(name) => completions::Reference::Prompt(name.clone()),
            CompletionRef::ResourceTemplate(uri) => completions::Reference::ResourceTemplate(uri.clone()),
        };
        guest.call_complete(&mut *store, &reference, argument, value).await
    }
}
