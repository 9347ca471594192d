//! The MCP server of one connection, and how it runs a plugin invocation
//! for a request.

use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt;
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use tracing::Instrument;

use crate::events::{self, EventRoute};
use crate::interaction::{self, Asker, Wire};
use crate::invocation::{Ended, Facts, Invocation};
use crate::logging::{self, Level};
use crate::request_context::{caller_identity, is_2026, principal, trace};
use crate::resolve::PluginRequest;
use crate::session::Session;
use crate::shared::Shared;
use warden_plugins::plugin::Plugin;
use warden_runtime::CallContext;
use warden_runtime::audit::Outcome;

/// The MCP server; cheap to clone, one per connection.
#[derive(Clone)]
pub struct WardenServer {
    pub(crate) shared: Arc<Shared>,
    pub(crate) session: Arc<Session>,
}

impl WardenServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            session: Arc::new(Session::default()),
        }
    }

    /// The level at or above which this request's plugin logs reach the client.
    fn log_level(&self, context: &RequestContext<RoleServer>) -> Option<Level> {
        if is_2026(context) {
            logging::requested(&context.meta)
        } else {
            self.session.log_level()
        }
    }

    /// How this request's plugin may reach the client for input.
    pub(crate) fn asker<'a>(&'a self, context: &RequestContext<RoleServer>, plugin: &'a Plugin) -> Asker<'a> {
        let (wire, declared) = if is_2026(context) {
            (Wire::Stateless, context.meta.client_capabilities())
        } else {
            (
                Wire::Session(context.peer.clone()),
                context.peer.peer_info().map(|info| info.capabilities.clone()),
            )
        };
        Asker {
            wire,
            client: interaction::client_asks(declared.as_ref()),
            grant: &plugin.prepared.settings.grants.interaction,
            codec: &self.shared.state_codec,
            cancel: context.ct.clone(),
            timeout: plugin.prepared.settings.limits.timeout,
            output: plugin.prepared.settings.limits.output,
            manifest: plugin.manifest_name(),
            caller: caller_identity(context),
            used: &self.shared.used_states,
        }
    }

    /// Runs one plugin invocation — tool call, read, prompt get, completion —
    /// for `context`: `body` gets the call's context and start time, runs the
    /// plugin and converts its reply; then the call's progress and logs are
    /// flushed to the client, and the invocation is recorded.
    pub(crate) async fn invoke<T>(
        &self,
        context: &RequestContext<RoleServer>,
        request: PluginRequest,
        argument_bytes: usize,
        body: impl AsyncFnOnce(CallContext, Instant) -> Ended<T>,
    ) -> Result<T, McpError> {
        let plugin = request.plugin.clone();
        let route = EventRoute {
            plugin: plugin.clone(),
            progress: context.meta.get_progress_token(),
            log_level: self.log_level(context),
        };
        let (events, forwarder) = events::start(context, route);
        let call = CallContext {
            plugin,
            events,
            cancel: context.ct.clone(),
            // Set per round, from what the client declared and the plugin is granted.
            asks: Default::default(),
            timeout: None,
            prepare_next: true,
        };
        let principal = principal(context);
        let started = Instant::now();
        let invocation = Invocation::start(
            self.shared.audit.as_deref(),
            request,
            principal.as_deref(),
            trace(context),
            argument_bytes,
            started,
        );
        invocation.admit()?;
        let _running = self.shared.in_flight.enter();
        // Every log line of the call (Warden's and the plugin's) carries the
        // client's trace id.
        let span = match invocation.trace() {
            Some(trace) => tracing::info_span!("call", trace_id = %trace.trace_id()),
            None => tracing::Span::none(),
        };
        // The call's sender goes with `call` into the sandbox: once the body
        // ends, the sandbox is gone and the forwarder has sent everything.
        // Progress and log messages come before the response, never after it.
        // Boxed: the call's state (its store, the guest's future) is several
        // KiB, and rmcp moves a request's future by value — into its task and
        // between the task's stages, ten copies a call.
        // A panic in Warden's code around the plugin's call (the one inside
        // it ends in `Runtime::invoke`) answers this request with an error
        // and is audited, instead of leaving the client waiting for ever.
        let run = Box::pin(std::panic::AssertUnwindSafe(body(call, started).instrument(span)).catch_unwind());
        let ended = match forwarder {
            Some(forwarder) => tokio::join!(run, Box::pin(forwarder)).0,
            None => run.await,
        };
        let Ok(ended) = ended else {
            invocation.record(Outcome::HostPanic, Facts::default());
            return Err(McpError::internal_error(
                "Warden itself failed handling this call (a bug in Warden, not in the plugin); the server goes on",
                None,
            ));
        };
        invocation.record(ended.outcome, ended.facts());
        ended.answer
    }
}
