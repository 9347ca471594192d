//! Interaction (contract 0.2.0): a plugin's "I need input first", put to the
//! client and answered, round after round, with a fresh sandbox each round.
//!
//! - 2025-11-25 (a session): Warden itself sends `elicitation/create`,
//!   `sampling/createMessage` or `roots/list` to the client during the call,
//!   waits (under the call's time limit and cancellation) and calls the plugin
//!   again with the answers.
//! - 2026-07-28 (stateless): Warden answers an `InputRequiredResult`; the
//!   client retries with `inputResponses` and the `requestState`, which holds
//!   the plugin's state and what was asked, sealed with an HMAC key (so it
//!   cannot be forged or altered), bound to the plugin, the request and its
//!   arguments, and expiring. Any Warden holding the same key continues the
//!   call: nothing is kept in memory between rounds.
//! - No client (`warden call`): every request is answered `refused`.
//!
//! The operator decides what a plugin may ask (`[interaction]`); a request it
//! did not grant reaches the plugin as `refused` and is audited as a denial.
//!
//! - `request`: a round's requests, checked against the limits and spelled as
//!   MCP, while the call still holds its concurrency slot;
//! - `form_schema`: the flat forms MCP allows;
//! - `answers`: a 2026 retry's answers, bound to what the round asked;
//! - `used_states`: each `requestState` is accepted once.

pub mod answers;
pub mod form_schema;
pub mod request;
pub mod used_states;

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use request::{Prepared, RequestLimits, Round};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, InputRequest, InputRequests, InputResponses, RequestStateCodec,
    RootsCapabilities, SamplingCapability, SealOptions, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
pub use used_states::{SharedUses, UsedStates};

use warden_plugins::plugin::Reply;
use warden_runtime::contract::types;
use warden_runtime::grants::InteractionGrant;
use warden_runtime::manifest;
use warden_runtime::{Asks, CallFailure, CallReport};

/// How long a `requestState` stays valid: a user answering a form takes time.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// The most state a plugin may carry between rounds.
pub const MAX_PLUGIN_STATE: usize = 16 << 10;

/// The most requests one round may ask.
pub const MAX_REQUESTS: usize = 16;

/// How the client is reached.
pub enum Wire {
    /// A 2025-11-25 session: ask now, over the session.
    Session(Peer<RoleServer>),
    /// The 2026-07-28 wire: answer `input_required`; the client retries.
    Stateless,
    /// The 2026-07-28 wire, for a call that may become a task: its
    /// questions go back as input-required results until the task exists,
    /// and through the task (`tasks/get`, `tasks/update`) once it does.
    Task(Arc<dyn TaskInput>),
    /// No client at all.
    Detached,
}

/// Where a task's questions go once the task exists (the tasks module drives them).
pub trait TaskInput: Send + Sync {
    /// Whether the task exists yet.
    fn started(&self) -> bool;
    /// Puts one round's `requests` to the client through the task and waits
    /// (until `deadline`, or until the call is cancelled) for every answer.
    fn ask_all<'a>(
        &'a self,
        requests: BTreeMap<String, (InputKind, InputRequest)>,
        deadline: tokio::time::Instant,
        cancel: &'a CancellationToken,
    ) -> Pin<Box<dyn Future<Output = Vec<types::KeyedAnswer>> + Send + 'a>>;
}

impl Wire {
    /// Whether a question goes back to the client as an input-required
    /// result, which the client answers by calling again.
    fn answers_by_retry(&self) -> bool {
        match self {
            Wire::Stateless => true,
            Wire::Task(task) => !task.started(),
            Wire::Session(_) | Wire::Detached => false,
        }
    }
}

/// What one request may ask, and how.
pub struct Asker<'a> {
    pub wire: Wire,
    /// What the client declared it supports.
    pub client: Asks,
    pub grant: &'a InteractionGrant,
    pub codec: &'a RequestStateCodec,
    /// The call's cancellation, and the time one question may wait.
    pub cancel: CancellationToken,
    pub timeout: Duration,
    /// `[limits] output`: the most bytes of text and JSON one round may ask with.
    pub output: u64,
    /// The plugin's manifest file name, for refusals that name a fix.
    pub manifest: String,
    /// Who is asking, as far as Warden can tell: a sealed state is bound to
    /// it (`caller_identity` in the handler).
    pub caller: String,
    /// The states this process accepted already.
    pub used: &'a UsedStates,
}

/// What a plugin's input-required round became inside its call:
/// checked requests, or why the round as a whole is refused.
pub type Asked = Result<Round, String>;

impl Asker<'_> {
    /// Checks and converts the requests a plugin asked. Called inside the
    /// plugin's call (see `Plugin::call_tool`), while it holds its slot.
    pub fn prepare(&self, asked: types::InputRequired) -> Asked {
        request::prepare(
            asked,
            &RequestLimits {
                output: self.output,
                grant: self.grant,
                manifest: &self.manifest,
            },
        )
    }
}

/// What the client declared, from its capabilities.
pub fn client_asks(capabilities: Option<&ClientCapabilities>) -> Asks {
    let Some(capabilities) = capabilities else {
        return Asks::default();
    };
    // `elicitation: {}` (neither mode named) means form mode, as the spec says.
    let (form, url) = match &capabilities.elicitation {
        Some(ElicitationCapability {
            form: None, url: None, ..
        }) => (true, false),
        Some(elicitation) => (elicitation.form.is_some(), elicitation.url.is_some()),
        None => (false, false),
    };
    Asks {
        elicit_form: form,
        elicit_url: url,
        sample: capabilities.sampling.is_some(),
        sample_with_tools: capabilities.sampling.as_ref().is_some_and(|s| s.tools.is_some()),
        list_roots: capabilities.roots.is_some(),
    }
}

/// `a` and `b` both.
pub fn both(a: Asks, b: Asks) -> Asks {
    Asks {
        elicit_form: a.elicit_form && b.elicit_form,
        elicit_url: a.elicit_url && b.elicit_url,
        sample: a.sample && b.sample,
        sample_with_tools: a.sample_with_tools && b.sample_with_tools,
        list_roots: a.list_roots && b.list_roots,
    }
}

/// What the manifest grants.
pub fn granted(grant: &InteractionGrant) -> Asks {
    Asks {
        elicit_form: grant.elicit,
        elicit_url: grant.elicit,
        sample: grant.sample,
        sample_with_tools: grant.sample,
        list_roots: grant.roots,
    }
}

/// The kind of a request, as the sealed state remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
    /// Form-mode elicitation.
    Elicit,
    /// URL-mode elicitation: its answer has no content.
    ElicitUrl,
    Sample,
    Roots,
}

impl InputKind {
    /// As refusals name it.
    pub fn describe(self) -> &'static str {
        match self {
            InputKind::Elicit | InputKind::ElicitUrl => "elicitation",
            InputKind::Sample => "sampling",
            InputKind::Roots => "roots",
        }
    }
}

/// What the host carries between rounds on the 2026 wire (sealed).
#[derive(Serialize, Deserialize)]
struct Carried {
    /// The round that asked.
    round: u32,
    /// The plugin's state, base64.
    state: String,
    /// What was asked of the client, by key.
    asked: BTreeMap<String, InputKind>,
    /// What was answered `refused` without asking, by key.
    refused: BTreeMap<String, String>,
}

/// What a `requestState` is bound to: the caller, the plugin (its exact
/// code), the request and its arguments. Every part is hashed with its
/// length, so no two different requests share a binding; `arguments` are
/// the request's own bytes (a tool's JSON text, a prompt's names and
/// values), hashed where they lie rather than serialised again.
pub struct Binding {
    bytes: Vec<u8>,
}

impl Binding {
    pub fn new<'a>(
        caller: &str,
        plugin_sha256: &str,
        method: &str,
        target: &str,
        arguments: impl IntoIterator<Item = &'a [u8]>,
    ) -> Self {
        let mut hasher = Sha256::new();
        let fixed = [
            caller.as_bytes(),
            plugin_sha256.as_bytes(),
            method.as_bytes(),
            target.as_bytes(),
        ];
        let mut add = |part: &[u8]| {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        };
        fixed.into_iter().for_each(&mut add);
        arguments.into_iter().for_each(&mut add);
        Self {
            bytes: hasher.finalize().to_vec(),
        }
    }
}

/// Seals what round `round` asked (`asked`, by key), what it answered
/// `refused` without asking, and the plugin's `state`, for `binding`.
pub fn seal(
    codec: &RequestStateCodec,
    binding: &Binding,
    round: u32,
    state: &[u8],
    asked: BTreeMap<String, InputKind>,
    refused: BTreeMap<String, String>,
) -> Result<String, McpError> {
    let carried = Carried {
        round,
        state: base64(state),
        asked,
        refused,
    };
    codec
        .seal_json_with(
            &carried,
            &SealOptions::new().associated_data(&binding.bytes).ttl(STATE_TTL),
        )
        .map_err(|e| McpError::internal_error(format!("cannot seal the request state: {e}"), None))
}

/// The 2026 wire's retry: what the client sent back.
pub struct Retry<'a> {
    pub responses: Option<&'a InputResponses>,
    pub state: Option<&'a str>,
}

/// How a call came out.
pub enum Driven<T> {
    /// The plugin's final answer (or failure), and the last round's report.
    Done(Result<Result<T, types::Error>, CallFailure>, CallReport),
    /// 2026 wire: the client must answer these and retry.
    InputRequired(rmcp::model::InputRequiredResult, CallReport),
}

/// Runs a call round after round until the plugin answers. `run` runs one
/// round in a fresh sandbox, and turns an input-required reply into `Asked`
/// with `Asker::prepare` before it gives up the call's slot; `denied`
/// records each request the operator did not grant (for the audit log).
pub async fn drive<T, Fut>(
    asker: &Asker<'_>,
    binding: &Binding,
    retry: Retry<'_>,
    denied: &mut Vec<String>,
    mut run: impl FnMut(Option<types::InputAnswers>, Asks) -> Fut,
) -> Result<Driven<T>, McpError>
where
    Fut: Future<Output = (Result<Result<Reply<T, Asked>, types::Error>, CallFailure>, CallReport)>,
{
    let asks = both(asker.client, granted(asker.grant));
    // One time limit for all the questions of a call, however many rounds ask.
    // Checked: the manifest caps the limit at a day, and an addition that
    // overflowed would panic outside the call's sandbox.
    let now = tokio::time::Instant::now();
    let deadline = now.checked_add(asker.timeout).unwrap_or(now + manifest::MAX_TIMEOUT);
    let resumption = answers::Resumption {
        codec: asker.codec,
        binding,
        grant: asker.grant,
        used: asker.used,
        stateless: asker.wire.answers_by_retry(),
    };
    // Without a state, what a 2026 client sent can only answer ahead what the
    // first round asks.
    let mut ahead = match (asker.wire.answers_by_retry(), retry.state, retry.responses) {
        (true, None, Some(responses)) => Some(responses),
        _ => None,
    };
    let sealed = retry.state;
    let (mut round, mut input) = answers::resume(&resumption, retry)?;
    if let (true, Some(sealed)) = (resumption.stateless, sealed) {
        asker.used.use_shared(sealed).await?;
    }
    loop {
        let (reply, report) = run(input.take(), asks).await;
        let asked = match reply {
            Ok(Ok(Reply::InputRequired(asked))) => asked,
            Ok(Ok(Reply::Done(value))) => return Ok(Driven::Done(Ok(Ok(value)), report)),
            Ok(Err(error)) => return Ok(Driven::Done(Ok(Err(error)), report)),
            Err(failure) => return Ok(Driven::Done(Err(failure), report)),
        };
        if round > asker.grant.max_rounds {
            let why = format!(
                "the plugin asked for input more than {} times in one call (the manifest's `[interaction] max-rounds`)",
                asker.grant.max_rounds
            );
            return Ok(Driven::Done(Ok(Err(types::Error::Failed(why))), report));
        }
        let asked = match asked {
            Ok(asked) => asked,
            Err(why) => return Ok(Driven::Done(Ok(Err(types::Error::Failed(why))), report)),
        };
        let plan = plan(asker, asked.requests, denied)?;
        match &asker.wire {
            wire if wire.answers_by_retry() && !plan.to_ask.is_empty() => {
                let asked_kinds: BTreeMap<String, InputKind> = plan
                    .to_ask
                    .iter()
                    .map(|(key, (kind, _))| (key.clone(), *kind))
                    .collect();
                let early = match ahead.take() {
                    Some(responses) => answers::answered_ahead(responses, &asked_kinds, asker.grant)?,
                    None => None,
                };
                if let Some(early) = early {
                    let mut answers = refused_answers(plan.refused);
                    answers.extend(early);
                    input = Some(types::InputAnswers {
                        answers,
                        state: asked.state,
                    });
                    round += 1;
                    continue;
                }
                let sealed = seal(
                    asker.codec,
                    binding,
                    round,
                    &asked.state,
                    asked_kinds,
                    plan.refused.iter().cloned().collect(),
                )?;
                let requests: InputRequests = plan
                    .to_ask
                    .into_iter()
                    .map(|(key, (_, request))| (key, request))
                    .collect();
                let mut result = rmcp::model::InputRequiredResult::from_request_state(sealed);
                result.input_requests = Some(requests);
                return Ok(Driven::InputRequired(result, report));
            }
            Wire::Task(task) if !plan.to_ask.is_empty() => {
                let mut answers = refused_answers(plan.refused);
                answers.extend(task.ask_all(plan.to_ask, deadline, &asker.cancel).await);
                if asker.cancel.is_cancelled() {
                    return Ok(Driven::Done(Err(CallFailure::Cancelled), report));
                }
                input = Some(types::InputAnswers {
                    answers,
                    state: asked.state,
                });
            }
            Wire::Session(peer) => {
                let mut answers = refused_answers(plan.refused);
                for (key, (kind, request)) in plan.to_ask {
                    let answer = ask(peer, asker, kind, request, deadline).await;
                    answers.push(types::KeyedAnswer { key, answer });
                }
                // Cancelled while the client was being asked: the call ends here,
                // with no further round.
                if asker.cancel.is_cancelled() {
                    return Ok(Driven::Done(Err(CallFailure::Cancelled), report));
                }
                input = Some(types::InputAnswers {
                    answers,
                    state: asked.state,
                });
            }
            // Nothing to put to the client (or no client): the plugin hears why.
            Wire::Stateless | Wire::Task(_) | Wire::Detached => {
                let mut refused = plan.refused;
                let why = match asker.wire {
                    Wire::Detached => "there is no client to ask (`warden call`)",
                    _ => "not asked",
                };
                refused.extend(plan.to_ask.into_keys().map(|key| (key, why.to_string())));
                input = Some(types::InputAnswers {
                    answers: refused_answers(refused),
                    state: asked.state,
                });
            }
        }
        round += 1;
    }
}

/// One round's requests, sorted: what to put to the client, and what to
/// answer `refused` without asking.
struct Plan {
    to_ask: BTreeMap<String, (InputKind, InputRequest)>,
    refused: Vec<(String, String)>,
}

fn plan(asker: &Asker<'_>, requests: Vec<request::Checked>, denied: &mut Vec<String>) -> Result<Plan, McpError> {
    let mut to_ask = BTreeMap::new();
    let mut refused = Vec::new();
    let mut missing = ClientCapabilities::default();
    let mut any_missing = false;
    for checked in requests {
        let what = checked.kind.describe();
        let declared = match checked.kind {
            InputKind::Elicit => asker.client.elicit_form,
            InputKind::ElicitUrl => asker.client.elicit_url,
            InputKind::Sample if checked.with_tools => asker.client.sample_with_tools,
            InputKind::Sample => asker.client.sample,
            InputKind::Roots => asker.client.list_roots,
        };
        if matches!(checked.prepared, Prepared::NotGranted) {
            denied.push(format!("interaction.{what} (request `{}`)", checked.key));
            refused.push((
                checked.key,
                format!("the operator has not granted {what} to this plugin (`[interaction]` in its manifest)"),
            ));
            continue;
        }
        if !declared && !matches!(asker.wire, Wire::Detached) {
            any_missing = true;
            match checked.kind {
                InputKind::Elicit | InputKind::ElicitUrl => {
                    missing.elicitation = Some(ElicitationCapability::default())
                }
                InputKind::Sample => missing.sampling = Some(SamplingCapability::default()),
                InputKind::Roots => missing.roots = Some(RootsCapabilities::default()),
            }
            refused.push((checked.key, format!("the client does not support {what}")));
            continue;
        }
        match checked.prepared {
            Prepared::Ready(request) => {
                to_ask.insert(checked.key, (checked.kind, request));
            }
            Prepared::Refused { why, denied: denial } => {
                denied.extend(denial);
                refused.push((checked.key, why));
            }
            Prepared::NotGranted => unreachable!("answered above"),
        }
    }
    // Nothing can be asked because the client lacks what the plugin needs.
    if any_missing && to_ask.is_empty() && refused.iter().all(|(_, why)| why.starts_with("the client does not")) {
        return Err(McpError::missing_required_client_capability(missing));
    }
    Ok(Plan { to_ask, refused })
}

fn refused_answers(refused: Vec<(String, String)>) -> Vec<types::KeyedAnswer> {
    refused
        .into_iter()
        .map(|(key, why)| types::KeyedAnswer {
            key,
            answer: types::InputAnswer::Refused(why),
        })
        .collect()
}

/// Puts one request to the client over its session and waits for the answer,
/// under the call's cancellation and time limit.
async fn ask(
    peer: &Peer<RoleServer>,
    asker: &Asker<'_>,
    kind: InputKind,
    request: InputRequest,
    deadline: tokio::time::Instant,
) -> types::InputAnswer {
    let request = match request {
        InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
        InputRequest::CreateMessage(request) => ServerRequest::CreateMessageRequest(request),
        InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
        _ => return types::InputAnswer::Refused("an unknown kind of request".into()),
    };
    let answered = tokio::select! {
        answered = peer.send_request(request) => answered,
        () = asker.cancel.cancelled() => return types::InputAnswer::Refused("the call was cancelled".into()),
        () = tokio::time::sleep_until(deadline) => return types::InputAnswer::Refused("the client did not answer in time".into()),
    };
    let result = match answered {
        Ok(result) => result,
        Err(error) => return types::InputAnswer::Refused(format!("the client answered with an error: {error}")),
    };
    match serde_json::to_value(&result) {
        Ok(value) => answers::parse_answer(kind, &value)
            .unwrap_or_else(|why| types::InputAnswer::Refused(format!("the client's answer is malformed: {why}"))),
        Err(error) => types::InputAnswer::Refused(format!("the client's answer cannot be read: {error}")),
    }
}

/// A codec with a key of this process's own, from the OS's random source:
/// a `requestState` it seals is good only here. Replicas behind one load
/// balancer share a key instead (`warden serve --state-key-file`).
pub fn process_codec() -> anyhow::Result<RequestStateCodec> {
    let mut key = vec![0u8; 32];
    getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("no randomness for a request-state key: {e}"))?;
    codec_with_key(key)
}

/// A codec keyed with `key` (at least 32 bytes).
pub fn codec_with_key(key: Vec<u8>) -> anyhow::Result<RequestStateCodec> {
    RequestStateCodec::try_new(key).map_err(|e| anyhow::anyhow!("unusable request-state key: {e}"))
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
}

fn unbase64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD_NO_PAD.decode(text)
}

#[cfg(test)]
mod tests;
