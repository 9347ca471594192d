//! The one `rmcp::ServerHandler`: every MCP request Warden answers.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult, CompletionInfo,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference, ServerCapabilities, ServerConfig,
    SetLevelRequestMethod, SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestMethod, UnsubscribeRequestParams, UpdateTaskParams,
};
// Deprecated in rmcp with all of logging (SEP-2577), but part of the
// 2025-11-25 wire Warden serves.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::content;
use crate::errors::{self, call_failed, content_refused, plugin_error, resource_not_found};
use crate::interaction;
use crate::interaction::{Binding, Retry};
use crate::invocation::Ended;
use crate::lists;
use crate::plugin_call::{PluginReply, drive_and_convert};
use crate::request_context::{cache_hints, caller_identity, is_2026, permitted, principal, trace};
use crate::resolve;
use crate::server::WardenServer;
use crate::task_call::{self, TaskCall};
use crate::tool_call::{self, Arguments};
use warden_plugins::plugin::CompletionRef;
use warden_runtime::audit::{InvocationKind, Outcome};
use warden_runtime::contract::types;
use warden_runtime::task_policy::TaskSupport;

// Logging and `resources/subscribe` are deprecated in rmcp (they are gone
// from the 2026-07-28 wire) but are part of the 2025-11-25 wire we serve.
#[allow(deprecated)]
impl ServerHandler for WardenServer {
    fn get_info(&self) -> ServerConfig {
        let supported = self.shared.notifier.supported();
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .enable_tasks()
            .build();
        // `listChanged` only when the catalog can change while serving.
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = supported.tools.then_some(true);
        }
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.subscribe = Some(true);
            resources.list_changed = supported.resources.then_some(true);
        }
        if let Some(prompts) = capabilities.prompts.as_mut() {
            prompts.list_changed = supported.prompts.then_some(true);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("warden", env!("CARGO_PKG_VERSION"))
                    .with_title("Warden")
                    .with_description("Tools, resources and prompts from sandboxed WebAssembly plugins"),
            )
            .with_instructions(
                "Tools here run in sandboxed WebAssembly plugins with only the access the operator granted. \
                 A result with isError explains what went wrong; fix the arguments and retry when it says so.",
            )
    }

    /// The tool's declaration, for rmcp's HTTP service: it checks a
    /// `tools/call`'s `Mcp-Param-*` headers against the body for the
    /// properties marked `x-mcp-header` (SEP-2243).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        Some(self.shared.catalog.snapshot().tool(name)?.decl().tool.clone())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A handshake-era session: list changes and resource updates reach it
        // through its peer.
        self.shared.notifier.register_session(context.peer, &self.session);
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(self.subscription_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.stream_changes(context).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            // Removed from the 2026-07-28 wire: a request carries its level.
            return Err(McpError::method_not_found::<SetLevelRequestMethod>());
        }
        self.session.set_log_level(request.level.into());
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let (tools, next) = lists::page(catalog.tools(), request.as_ref(), &context, |t| t.decl().tool.clone())?;
        let mut result = cache_hints!(ListToolsResult::with_all_items(tools), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let (resources, next) = lists::page(catalog.resources(), request.as_ref(), &context, |r| {
            r.decl().resource.clone()
        })?;
        let mut result = cache_hints!(ListResourcesResult::with_all_items(resources), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let (templates, next) = lists::page(catalog.templates(), request.as_ref(), &context, |t| {
            t.decl().template.clone()
        })?;
        let mut result = cache_hints!(ListResourceTemplatesResult::with_all_items(templates), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let (prompts, next) = lists::page(catalog.prompts(), request.as_ref(), &context, |p| {
            p.decl().prompt.clone()
        })?;
        let mut result = cache_hints!(ListPromptsResult::with_all_items(prompts), &context);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let uri = request.uri;
        let Some((plugin, read)) = resolve::read(&catalog, &uri) else {
            errors::unknown_target(InvocationKind::ResourceRead);
            return Err(resource_not_found(&uri, None));
        };
        permitted(&context, &read, &format!("the resource `{uri}`"))?;
        let limit = plugin.prepared.settings.limits.output;
        let asker = self.asker(&context, plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let binding = Binding::new(&asker.caller, &plugin.sha256, "resources/read", &uri, []);
        let prepare = |asked| asker.prepare(asked);
        let what = format!("a read of `{uri}`");
        let convert = |reply: PluginReply<Vec<types::ResourceContents>>, report| {
            let converted = match reply {
                Err(failure) => Err(call_failed(&failure, plugin, &what)),
                Ok(Err(error)) => Err(plugin_error(
                    error,
                    limit,
                    (plugin, &what),
                    |why| resource_not_found(&uri, Some(format!("no resource `{uri}`: {why}"))),
                    |why| {
                        McpError::internal_error(
                            format!("plugin `{}` could not read `{uri}`: {why}", plugin.name),
                            Some(json!({ "uri": uri })),
                        )
                    },
                )),
                // A read that finds nothing is "not found", never empty contents.
                Ok(Ok(contents)) if contents.is_empty() => Err((Outcome::ToolError, resource_not_found(&uri, None))),
                Ok(Ok(contents)) => {
                    content::read_contents(contents, limit).map_err(|error| content_refused(&error, plugin, &what))
                }
            };
            let read = |contents| cache_hints!(ReadResourceResult::new(contents), &context).into();
            Ended::of(converted.map(read), report)
        };
        self.invoke(&context, read, uri.len(), async |call, _| {
            let round = |input: Option<_>, call| {
                let (runtime, uri, prepare) = (&self.shared.runtime, &uri, &prepare);
                async move { plugin.read_resource(runtime, uri, input.as_ref(), call, prepare).await }
            };
            drive_and_convert(
                &asker,
                &binding,
                retry,
                &call,
                round,
                ReadResourceResponse::InputRequired,
                convert,
            )
            .await
        })
        .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            return Err(McpError::method_not_found::<SubscribeRequestMethod>());
        }
        self.subscribe_session(&request, &context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_2026(&context) {
            return Err(McpError::method_not_found::<UnsubscribeRequestMethod>());
        }
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let Some((entry, prompt)) = resolve::prompt(&catalog, &request.name, InvocationKind::PromptGet) else {
            return Err(errors::unknown_prompt(&request.name));
        };
        permitted(&context, &prompt, &format!("the prompt `{}`", request.name))?;
        let mut arguments: Vec<(String, String)> = Vec::new();
        for (name, value) in request.arguments.unwrap_or_default() {
            // Prompt arguments are strings; other JSON is passed as its text.
            let value = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            arguments.push((name, value));
        }
        let named = || Some(json!({ "name": request.name }));
        entry
            .decl()
            .check_arguments(arguments.iter().map(|(name, _)| name.as_str()))
            .map_err(|why| McpError::invalid_params(why, named()))?;
        let plugin = &entry.plugin;
        let limit = plugin.prepared.settings.limits.output;
        let argument_bytes = arguments.iter().map(|(name, value)| name.len() + value.len()).sum();
        let asker = self.asker(&context, plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let binding = Binding::new(
            &asker.caller,
            &plugin.sha256,
            "prompts/get",
            &request.name,
            arguments
                .iter()
                .flat_map(|(name, value)| [name.as_bytes(), value.as_bytes()]),
        );
        let prepare = |asked| asker.prepare(asked);
        let what = format!("prompt `{}`", request.name);
        let convert = |reply: PluginReply<types::PromptResult>, report| {
            let converted = match reply {
                Err(failure) => Err(call_failed(&failure, plugin, &what)),
                Ok(Err(error)) => Err(plugin_error(
                    error,
                    limit,
                    (plugin, &what),
                    |why| McpError::invalid_params(format!("{what}: {why}"), named()),
                    |why| {
                        McpError::internal_error(
                            format!("plugin `{}` could not render {what}: {why}", plugin.name),
                            None,
                        )
                    },
                )),
                Ok(Ok(reply)) => {
                    content::prompt_result(reply, limit).map_err(|error| content_refused(&error, plugin, &what))
                }
            };
            Ended::of(converted.map(GetPromptResponse::from), report)
        };
        self.invoke(&context, prompt, argument_bytes, async |call, _| {
            let round = |input: Option<_>, call| {
                let (runtime, name, arguments, prepare) = (&self.shared.runtime, &request.name, &arguments, &prepare);
                async move {
                    plugin
                        .get_prompt(runtime, name, arguments, input.as_ref(), call, prepare)
                        .await
                }
            };
            drive_and_convert(
                &asker,
                &binding,
                retry,
                &call,
                round,
                GetPromptResponse::InputRequired,
                convert,
            )
            .await
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let (plugin, reference, completed, what) = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let Some((entry, completed)) = resolve::prompt(&catalog, &prompt.name, InvocationKind::Completion)
                else {
                    return Err(errors::unknown_completed_prompt(&prompt.name));
                };
                let reference = CompletionRef::Prompt(prompt.name.clone());
                (&entry.plugin, reference, completed, &prompt.name)
            }
            Reference::Resource(template) => {
                let Some((entry, completed)) = resolve::completed_template(&catalog, &template.uri) else {
                    return Err(errors::unknown_completed_template(&template.uri));
                };
                let reference = CompletionRef::ResourceTemplate(template.uri.clone());
                (&entry.plugin, reference, completed, &template.uri)
            }
            _ => return Ok(CompleteResult::default()),
        };
        permitted(&context, &completed, &format!("`{what}`"))?;
        let argument_bytes = request.argument.name.len() + request.argument.value.len();
        let completion = self
            .invoke(&context, completed, argument_bytes, async |call, _| {
                let argument = &request.argument;
                let (reply, report) = plugin
                    .complete(&self.shared.runtime, &reference, &argument.name, &argument.value, call)
                    .await;
                let what = "`complete`";
                let limit = plugin.prepared.settings.limits.output;
                let converted = reply
                    .map_err(|failure| call_failed(&failure, plugin, what))
                    .and_then(|values| {
                        content::completion_values(values, CompletionInfo::MAX_VALUES, limit)
                            .map_err(|error| content_refused(&error, plugin, what))
                    })
                    .and_then(|(values, total, has_more)| {
                        CompletionInfo::with_pagination(values, u32::try_from(total).ok(), has_more)
                            .map_err(|e| (Outcome::ToolError, McpError::internal_error(e, None)))
                    });
                Ended::of(converted, report)
            })
            .await?;
        Ok(CompleteResult::new(completion))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.shared
            .tasks
            .get(&request.task_id, &caller_identity(&context))
            .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let caller = caller_identity(&context);
        self.shared
            .tasks
            .update(&request.task_id, &caller, request.input_responses)
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.shared
            .tasks
            .cancel(&request.task_id, &caller_identity(&context))
            .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let catalog = self.shared.catalog.loaded().await;
        let Some((entry, tool)) = resolve::tool(&catalog, &request.name) else {
            return Err(errors::unknown_tool(&request.name));
        };
        permitted(&context, &tool, &format!("the tool `{}`", request.name))?;
        let arguments = Arguments::new(Value::Object(request.arguments.unwrap_or_default()));
        let decl = entry.decl();
        let support = entry.plugin.prepared.settings.tasks.support(&decl.tool.name, decl.task);
        if support != TaskSupport::Forbidden {
            let declared = is_2026(&context) && context.client_capabilities().is_some_and(|c| c.supports_tasks());
            match (declared, self.shared.tasks.is_draining(), support) {
                (true, false, _) => {
                    let call = TaskCall {
                        shared: self.shared.clone(),
                        catalog: catalog.clone(),
                        name: request.name.to_string(),
                        arguments,
                        support,
                        caller: caller_identity(&context),
                        principal: principal(&context),
                        trace: trace(&context),
                        client: interaction::client_asks(context.meta.client_capabilities().as_ref()),
                        responses: request.input_responses,
                        state: request.request_state,
                    };
                    return task_call::start(call).await;
                }
                (true, true, TaskSupport::Required) => return Err(errors::shutting_down()),
                (false, _, TaskSupport::Required) => return Err(errors::task_required(&request.name)),
                _ => {}
            }
        }
        let asker = self.asker(&context, &entry.plugin);
        let retry = Retry {
            responses: request.input_responses.as_ref(),
            state: request.request_state.as_deref(),
        };
        let runtime = &self.shared.runtime;
        let (plugin, decl, name) = (&entry.plugin, entry.decl(), &request.name);
        self.invoke(&context, tool, arguments.json.len(), async |call, started| {
            tool_call::run(runtime, plugin, decl, name, &arguments, call, started, &asker, retry).await
        })
        .await
    }
}
