//! Resource subscriptions and list-change streams: who may be told what
//! changed, on both wires (`resources/subscribe` on 2025-11-25,
//! `subscriptions/listen` on 2026-07-28).

use std::time::Instant;

use rmcp::model::{SubscribeRequestParams, SubscriptionFilter};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};

use crate::access;
use crate::errors::resource_not_found;
use crate::invocation::{Facts, Invocation};
use crate::request_context::{principal, trace};
use crate::resolve;
use crate::server::WardenServer;
use warden_runtime::audit::Outcome;

impl WardenServer {
    /// The subscriptions a `subscriptions/listen` is acknowledged with.
    pub(crate) fn subscription_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        // rmcp narrows this to what was requested and what `get_info` advertises.
        let supported = self.shared.notifier.supported();
        let mut filter = SubscriptionFilter::default();
        filter.tools_list_changed = supported.tools.then_some(true);
        filter.resources_list_changed = supported.resources.then_some(true);
        filter.prompts_list_changed = supported.prompts.then_some(true);
        // Only URIs some plugin serves can be subscribed to. A list over the
        // limits is accepted empty; `listen` then refuses it with an error.
        // rmcp gives this no request, so no principal: in OAuth mode the
        // HTTP layer has already taken what the grant does not reach out of
        // the request (`scope_check::narrow_listen`), and `listen` checks
        // each update against the grant again.
        let catalog = self.shared.catalog.snapshot();
        filter.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            if self.shared.notifier.limits().check_list(uris).is_err() {
                return Vec::new();
            }
            uris.iter()
                .filter(|uri| access::may_subscribe(None, &catalog, uri))
                .cloned()
                .collect()
        });
        filter
    }

    /// A `subscriptions/listen` stream: list changes and resource updates
    /// until the client goes away or the server shuts down.
    pub(crate) async fn stream_changes(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if let Some(uris) = &context.requested().resource_subscriptions {
            self.shared.notifier.limits().check_list(uris)?;
        }
        let mut swaps = self.shared.notifier.subscribe();
        let accepted = context.accepted().clone();
        let subscriber = principal(context.request_context());
        let mut subscribed = accepted.resource_subscriptions.clone().unwrap_or_default();
        let catalog = self.shared.catalog.loaded().await;
        subscribed.retain(|uri| access::may_subscribe(subscriber.as_ref().map(|p| &p.grant), &catalog, uri));
        drop(catalog);
        loop {
            let (changes, swap) = tokio::select! {
                () = context.cancelled() => return Ok(()),
                swapped = swaps.next() => match swapped {
                    Some(swapped) => swapped,
                    // The server is shutting down: end the stream gracefully.
                    None => return Ok(()),
                },
            };
            let sink = context.sink();
            let sent = async {
                if changes.tools && accepted.tools_list_changed == Some(true) {
                    sink.notify_tool_list_changed().await?;
                }
                if changes.resources && accepted.resources_list_changed == Some(true) {
                    sink.notify_resource_list_changed().await?;
                }
                if changes.prompts && accepted.prompts_list_changed == Some(true) {
                    sink.notify_prompt_list_changed().await?;
                }
                // Each update follows the policy in force: a grant removed
                // since the stream opened ends that subscription.
                let grant = subscriber.as_ref().map(|p| p.permissions_now());
                let mut ended = Vec::new();
                for uri in subscribed.iter().filter(|uri| swap.updated(uri)) {
                    if access::may_deliver(grant.as_ref(), &swap, uri) {
                        sink.notify_resource_updated(uri.clone()).await?;
                    } else {
                        ended.push(uri.clone());
                    }
                }
                Ok::<_, rmcp::service::SubscriptionSendError>(ended)
            };
            match sent.await {
                Ok(ended) if !ended.is_empty() => {
                    tracing::info!(
                        principal = subscriber.as_ref().map(|p| p.subject.as_str()),
                        "ended {} subscriptions of a stream: the access policy no longer grants them",
                        ended.len()
                    );
                    subscribed.retain(|uri| !ended.contains(uri));
                }
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!("subscription stream ended: {error}");
                    return Ok(());
                }
            }
        }
    }

    /// A 2025-11-25 `resources/subscribe`.
    pub(crate) async fn subscribe_session(
        &self,
        request: &SubscribeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let limits = self.shared.notifier.limits();
        limits.check_uri(&request.uri)?;
        let catalog = self.shared.catalog.loaded().await;
        let subscriber = principal(context);
        // Unknown and ungranted are one answer: a subscription must not tell
        // a principal which URIs the plugins it may not use serve.
        if !access::may_subscribe(subscriber.as_ref().map(|p| &p.grant), &catalog, &request.uri) {
            if let Some(principal) = &subscriber
                && let Some((_, read)) = resolve::read(&catalog, &request.uri)
            {
                // The operator learns of the probe; the client does not.
                let detail = "a subscription outside the caller's grant, answered as an unknown URI";
                tracing::info!(
                    principal = principal.subject,
                    "refused a subscription to `{}`: not in the caller's grant (answered as unknown)",
                    request.uri
                );
                let facts = Facts {
                    detail: Some(detail),
                    ..Facts::default()
                };
                Invocation::start(
                    self.shared.audit.as_deref(),
                    read,
                    Some(principal),
                    trace(context),
                    request.uri.len(),
                    Instant::now(),
                )
                .audit_only(Outcome::Forbidden, facts);
            }
            return Err(resource_not_found(&request.uri, None));
        }
        if !self
            .session
            .subscribe(request.uri.clone(), subscriber, limits.per_client)
        {
            return Err(limits.full(&request.uri));
        }
        Ok(())
    }
}
