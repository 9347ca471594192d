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

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ElicitationCapability, InputRequest, InputRequests, InputResponses, RequestStateCodec,
    RootsCapabilities, SamplingCapability, SealOptions, ServerRequest,
};
use rmcp::service::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::grants::InteractionGrant;
use crate::plugin::Reply;
use crate::runtime::contract::types;
use crate::runtime::{Asks, CallFailure, CallReport};

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
    /// No client at all.
    Detached,
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
enum Kind {
    Elicit,
    Sample,
    Roots,
}

/// What the host carries between rounds on the 2026 wire (sealed).
#[derive(Serialize, Deserialize)]
struct Carried {
    /// The round that asked.
    round: u32,
    /// The plugin's state, base64.
    state: String,
    /// What was asked of the client, by key.
    asked: BTreeMap<String, Kind>,
    /// What was answered `refused` without asking, by key.
    refused: BTreeMap<String, String>,
}

/// What a `requestState` is bound to: the plugin (its exact code), the
/// request and its arguments.
pub struct Binding {
    bytes: Vec<u8>,
}

impl Binding {
    pub fn new(plugin_sha256: &str, method: &str, target: &str, arguments: &[u8]) -> Self {
        let mut hasher = Sha256::new();
        for part in [
            plugin_sha256.as_bytes(),
            method.as_bytes(),
            target.as_bytes(),
            arguments,
        ] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        Self {
            bytes: hasher.finalize().to_vec(),
        }
    }
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
/// round in a fresh sandbox; `denied` records each request the operator did
/// not grant (for the audit log).
pub async fn drive<T, Fut>(
    asker: &Asker<'_>,
    binding: &Binding,
    retry: Retry<'_>,
    denied: &mut Vec<String>,
    mut run: impl FnMut(Option<types::InputAnswers>, Asks) -> Fut,
) -> Result<Driven<T>, McpError>
where
    Fut: Future<Output = (Result<Result<Reply<T>, types::Error>, CallFailure>, CallReport)>,
{
    let asks = both(asker.client, granted(asker.grant));
    // One time limit for all the questions of a call, however many rounds ask.
    let deadline = tokio::time::Instant::now() + asker.timeout;
    let (mut round, mut input) = resume(asker.codec, binding, retry)?;
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
        if let Err(why) = check_asked(&asked) {
            return Ok(Driven::Done(Ok(Err(types::Error::Failed(why))), report));
        }
        let plan = plan(asker, &asked, denied)?;
        match &asker.wire {
            Wire::Stateless if !plan.to_ask.is_empty() => {
                let carried = Carried {
                    round,
                    state: base64(&asked.state),
                    asked: plan
                        .to_ask
                        .iter()
                        .map(|(key, (kind, _))| (key.clone(), *kind))
                        .collect(),
                    refused: plan.refused.iter().cloned().collect(),
                };
                let sealed = asker
                    .codec
                    .seal_json_with(
                        &carried,
                        &SealOptions::new().associated_data(&binding.bytes).ttl(STATE_TTL),
                    )
                    .map_err(|e| McpError::internal_error(format!("cannot seal the request state: {e}"), None))?;
                let requests: InputRequests = plan
                    .to_ask
                    .into_iter()
                    .map(|(key, (_, request))| (key, request))
                    .collect();
                let mut result = rmcp::model::InputRequiredResult::from_request_state(sealed);
                result.input_requests = Some(requests);
                return Ok(Driven::InputRequired(result, report));
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
            Wire::Stateless | Wire::Detached => {
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

/// The first round, or where a 2026 retry left off.
fn resume(
    codec: &RequestStateCodec,
    binding: &Binding,
    retry: Retry<'_>,
) -> Result<(u32, Option<types::InputAnswers>), McpError> {
    let invalid = |why: String| McpError::invalid_params(why, None);
    let (round, state, asked, refused) = match retry.state {
        Some(sealed) => {
            let carried: Carried = codec.open_json_with(sealed, &binding.bytes).map_err(|e| {
                invalid(format!(
                    "requestState is not one this server issued for this request and its arguments, \
                     or it has expired ({e}); call again without it"
                ))
            })?;
            let state = unbase64(&carried.state).map_err(|_| invalid("requestState is malformed".into()))?;
            (carried.round + 1, state, Some(carried.asked), carried.refused)
        }
        None if retry.responses.is_some() => (2, Vec::new(), None, BTreeMap::new()),
        None => return Ok((1, None)),
    };
    let mut answers = refused_answers(refused.into_iter().collect());
    for (key, value) in retry.responses.into_iter().flatten() {
        let kind = match &asked {
            // Keys nobody asked for are ignored, as the spec advises.
            Some(asked) => match asked.get(key) {
                Some(kind) => *kind,
                None => continue,
            },
            None => infer_kind(value).ok_or_else(|| {
                invalid(format!(
                    "inputResponses.{key} is not an elicitation, sampling or roots result"
                ))
            })?,
        };
        let answer = parse_answer(kind, value).map_err(|why| invalid(format!("inputResponses.{key}: {why}")))?;
        answers.push(types::KeyedAnswer {
            key: key.clone(),
            answer,
        });
    }
    Ok((round, Some(types::InputAnswers { answers, state })))
}

/// The plugin's requests, checked: keys and sizes.
fn check_asked(asked: &types::InputRequired) -> Result<(), String> {
    if asked.requests.is_empty() {
        return Err("the plugin answered input-required with no requests".into());
    }
    if asked.requests.len() > MAX_REQUESTS {
        return Err(format!(
            "the plugin asked {} things at once; at most {MAX_REQUESTS}",
            asked.requests.len()
        ));
    }
    if asked.state.len() > MAX_PLUGIN_STATE {
        return Err(format!(
            "the plugin's state is {} bytes; at most {MAX_PLUGIN_STATE}",
            asked.state.len()
        ));
    }
    let mut keys: Vec<&str> = asked.requests.iter().map(|r| r.key.as_str()).collect();
    for key in &keys {
        crate::naming::check_item_name(key).map_err(|e| format!("request key {key:?}: {e}"))?;
    }
    keys.sort_unstable();
    if keys.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err("the plugin used one request key twice in a round".into());
    }
    Ok(())
}

/// One round's requests, sorted: what to put to the client, and what to
/// answer `refused` without asking.
struct Plan {
    to_ask: BTreeMap<String, (Kind, InputRequest)>,
    refused: Vec<(String, String)>,
}

fn plan(asker: &Asker<'_>, asked: &types::InputRequired, denied: &mut Vec<String>) -> Result<Plan, McpError> {
    let mut to_ask = BTreeMap::new();
    let mut refused = Vec::new();
    let mut missing = ClientCapabilities::default();
    let mut any_missing = false;
    for keyed in &asked.requests {
        let (kind, what, granted, declared) = match &keyed.request {
            types::InputRequest::ElicitForm(_) => (
                Kind::Elicit,
                "elicitation",
                asker.grant.elicit,
                asker.client.elicit_form,
            ),
            types::InputRequest::ElicitUrl(_) => {
                (Kind::Elicit, "elicitation", asker.grant.elicit, asker.client.elicit_url)
            }
            types::InputRequest::Sample(request) => (
                Kind::Sample,
                "sampling",
                asker.grant.sample,
                if request.tools.is_some() {
                    asker.client.sample_with_tools
                } else {
                    asker.client.sample
                },
            ),
            types::InputRequest::ListRoots => (Kind::Roots, "roots", asker.grant.roots, asker.client.list_roots),
        };
        if !granted {
            denied.push(format!("interaction.{what} (request `{}`)", keyed.key));
            refused.push((
                keyed.key.clone(),
                format!("the operator has not granted {what} to this plugin (`[interaction]` in its manifest)"),
            ));
            continue;
        }
        if !declared && !matches!(asker.wire, Wire::Detached) {
            any_missing = true;
            match kind {
                Kind::Elicit => missing.elicitation = Some(ElicitationCapability::default()),
                Kind::Sample => missing.sampling = Some(SamplingCapability::default()),
                Kind::Roots => missing.roots = Some(RootsCapabilities::default()),
            }
            refused.push((keyed.key.clone(), format!("the client does not support {what}")));
            continue;
        }
        match request(&keyed.request, asker.grant) {
            Ok(request) => {
                to_ask.insert(keyed.key.clone(), (kind, request));
            }
            Err(why) => refused.push((keyed.key.clone(), why)),
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

/// A plugin's request as MCP spells it.
fn request(request: &types::InputRequest, grant: &InteractionGrant) -> Result<InputRequest, String> {
    let json_of = |text: &str, what: &str| -> Result<Value, String> {
        serde_json::from_str(text).map_err(|e| format!("its {what} is not JSON: {e}"))
    };
    let wire = match request {
        types::InputRequest::ElicitForm(form) => json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": form.message,
                "requestedSchema": json_of(&form.requested_schema, "requested schema")?,
            }
        }),
        types::InputRequest::ElicitUrl(url) => json!({
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": url.message,
                "url": url.url,
                "elicitationId": url.elicitation_id,
            }
        }),
        types::InputRequest::Sample(sample) => {
            let messages = sample
                .messages
                .iter()
                .map(|message| {
                    Ok(json!({
                        "role": match message.role { types::Role::User => "user", types::Role::Assistant => "assistant" },
                        "content": sampling_content(&message.content)?,
                    }))
                })
                .collect::<Result<Vec<_>, String>>()?;
            let mut params = Map::new();
            params.insert("messages".into(), Value::Array(messages));
            // Capped by the operator: a larger request is asked for the cap.
            params.insert("maxTokens".into(), sample.max_tokens.min(grant.max_tokens).into());
            if let Some(system) = &sample.system_prompt {
                params.insert("systemPrompt".into(), system.clone().into());
            }
            if let Some(temperature) = sample.temperature {
                params.insert("temperature".into(), temperature.into());
            }
            if !sample.stop_sequences.is_empty() {
                params.insert("stopSequences".into(), sample.stop_sequences.clone().into());
            }
            if let Some(preferences) = &sample.model_preferences {
                params.insert("modelPreferences".into(), json_of(preferences, "model preferences")?);
            }
            if let Some(tools) = &sample.tools {
                params.insert("tools".into(), json_of(tools, "tools")?);
            }
            json!({ "method": "sampling/createMessage", "params": params })
        }
        types::InputRequest::ListRoots => json!({ "method": "roots/list" }),
    };
    serde_json::from_value(wire).map_err(|e| format!("it is not a valid MCP request: {e}"))
}

fn sampling_content(content: &types::Content) -> Result<Value, String> {
    use base64::Engine as _;
    let encode = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    Ok(match content {
        types::Content::Text(text) => json!({ "type": "text", "text": text }),
        types::Content::Image(blob) => {
            json!({ "type": "image", "data": encode(&blob.data), "mimeType": blob.mime_type })
        }
        types::Content::Audio(blob) => {
            json!({ "type": "audio", "data": encode(&blob.data), "mimeType": blob.mime_type })
        }
        _ => return Err("a sampling message holds text, an image or audio".into()),
    })
}

/// Puts one request to the client over its session and waits for the answer,
/// under the call's cancellation and time limit.
async fn ask(
    peer: &Peer<RoleServer>,
    asker: &Asker<'_>,
    kind: Kind,
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
        Ok(value) => parse_answer(kind, &value)
            .unwrap_or_else(|why| types::InputAnswer::Refused(format!("the client's answer is malformed: {why}"))),
        Err(error) => types::InputAnswer::Refused(format!("the client's answer cannot be read: {error}")),
    }
}

/// What kind of result a value is, by its shape.
fn infer_kind(value: &Value) -> Option<Kind> {
    let object = value.as_object()?;
    if object.contains_key("action") {
        Some(Kind::Elicit)
    } else if object.contains_key("roots") {
        Some(Kind::Roots)
    } else if object.contains_key("content") && object.contains_key("role") {
        Some(Kind::Sample)
    } else {
        None
    }
}

/// A client's result as the plugin receives it.
fn parse_answer(kind: Kind, value: &Value) -> Result<types::InputAnswer, String> {
    let object = value.as_object().ok_or("not a JSON object")?;
    Ok(match kind {
        Kind::Elicit => {
            let action = match object.get("action").and_then(Value::as_str) {
                Some("accept") => types::ElicitAction::Accept,
                Some("decline") => types::ElicitAction::Decline,
                Some("cancel") => types::ElicitAction::Cancel,
                _ => return Err("`action` must be \"accept\", \"decline\" or \"cancel\"".into()),
            };
            let content = match object.get("content") {
                None | Some(Value::Null) => None,
                Some(content @ Value::Object(_)) => Some(content.to_string()),
                Some(_) => return Err("`content` must be an object".into()),
            };
            types::InputAnswer::Elicit(types::ElicitAnswer { action, content })
        }
        Kind::Sample => {
            let role = match object.get("role").and_then(Value::as_str) {
                Some("user") => types::Role::User,
                Some("assistant") => types::Role::Assistant,
                _ => return Err("`role` must be \"user\" or \"assistant\"".into()),
            };
            let content = object.get("content").ok_or("`content` is missing")?;
            let blocks: Vec<&Value> = match content {
                Value::Array(blocks) => blocks.iter().collect(),
                block @ Value::Object(_) => vec![block],
                _ => return Err("`content` must be a content block or an array of them".into()),
            };
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect();
            types::InputAnswer::Sample(types::SamplingAnswer {
                role,
                content: content.to_string(),
                text: (!texts.is_empty()).then(|| texts.concat()),
                model: object
                    .get("model")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                stop_reason: object.get("stopReason").and_then(Value::as_str).map(str::to_string),
            })
        }
        Kind::Roots => {
            let roots = object
                .get("roots")
                .and_then(Value::as_array)
                .ok_or("`roots` must be an array")?
                .iter()
                .map(|root| {
                    Ok(types::Root {
                        uri: root["uri"].as_str().ok_or("each root needs a `uri`")?.to_string(),
                        name: root["name"].as_str().map(str::to_string),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            types::InputAnswer::Roots(roots)
        }
    })
}

/// A codec with a key of this process's own, from the OS's random source:
/// a `requestState` it seals is good only here. Replicas behind one load
/// balancer share a key instead (`warden serve --state-key-file`).
pub fn process_codec() -> anyhow::Result<RequestStateCodec> {
    use std::io::Read as _;
    let mut key = vec![0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut key))
        .map_err(|e| anyhow::anyhow!("cannot read /dev/urandom for a request-state key: {e}"))?;
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
mod tests {
    use super::*;

    fn codec() -> RequestStateCodec {
        RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
    }

    #[test]
    fn a_retry_opens_only_state_issued_for_the_same_request() {
        let codec = codec();
        let binding = Binding::new("sha", "tools/call", "greet", b"{}");
        let carried = Carried {
            round: 1,
            state: base64(b"mine"),
            asked: [("name".to_string(), Kind::Elicit)].into(),
            refused: [("roots".to_string(), "not granted".to_string())].into(),
        };
        let sealed = codec
            .seal_json_with(
                &carried,
                &SealOptions::new().associated_data(&binding.bytes).ttl(STATE_TTL),
            )
            .unwrap();
        let responses: InputResponses = [
            (
                "name".to_string(),
                json!({"action": "accept", "content": {"name": "Ada"}}),
            ),
            ("extra".to_string(), json!({"action": "accept"})),
        ]
        .into();
        let retry = || Retry {
            responses: Some(&responses),
            state: Some(&sealed),
        };
        let (round, input) = resume(&codec, &binding, retry()).unwrap();
        assert_eq!(round, 2);
        let input = input.unwrap();
        assert_eq!(input.state, b"mine");
        let keys: Vec<&str> = input.answers.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["roots", "name"], "the extra key is ignored");

        // Other arguments, another tool, a tampered or foreign state: refused.
        for other in [
            Binding::new("sha", "tools/call", "greet", b"{\"x\":1}"),
            Binding::new("sha", "tools/call", "other", b"{}"),
            Binding::new("other-code", "tools/call", "greet", b"{}"),
        ] {
            assert!(resume(&codec, &other, retry()).is_err());
        }
        let tampered = format!("{sealed}-TAMPERED");
        assert!(
            resume(
                &codec,
                &binding,
                Retry {
                    responses: Some(&responses),
                    state: Some(&tampered)
                }
            )
            .is_err()
        );
        let foreign = RequestStateCodec::try_new(vec![9u8; 32]).unwrap();
        assert!(resume(&foreign, &binding, retry()).is_err());
    }

    #[test]
    fn an_expired_state_is_refused() {
        let codec = codec();
        let binding = Binding::new("sha", "tools/call", "greet", b"{}");
        let carried = Carried {
            round: 1,
            state: String::new(),
            asked: BTreeMap::new(),
            refused: BTreeMap::new(),
        };
        let options = SealOptions::new()
            .associated_data(&binding.bytes)
            .ttl(Duration::from_millis(1));
        let sealed = codec.seal_json_with(&carried, &options).unwrap();
        // The expiry has millisecond resolution: wait (without sleeping) until it is past.
        let sealed_at = std::time::Instant::now();
        while sealed_at.elapsed() < Duration::from_millis(5) {
            std::hint::spin_loop();
        }
        let retry = Retry {
            responses: None,
            state: Some(&sealed),
        };
        let error = resume(&codec, &binding, retry).unwrap_err();
        assert!(error.message.contains("request state has expired"), "{}", error.message);
    }

    #[test]
    fn answers_without_state_are_read_by_their_shape_and_checked() {
        let codec = codec();
        let binding = Binding::new("sha", "tools/call", "greet", b"{}");
        let responses: InputResponses = [("bad".to_string(), json!(12345))].into();
        let error = resume(
            &codec,
            &binding,
            Retry {
                responses: Some(&responses),
                state: None,
            },
        )
        .unwrap_err();
        assert!(error.message.contains("inputResponses.bad"), "{}", error.message);
        let responses: InputResponses = [(
            "q".to_string(),
            json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}),
        )]
        .into();
        let (_, input) = resume(
            &codec,
            &binding,
            Retry {
                responses: Some(&responses),
                state: None,
            },
        )
        .unwrap();
        match &input.unwrap().answers[0].answer {
            types::InputAnswer::Sample(answer) => assert_eq!(answer.text.as_deref(), Some("Paris")),
            _ => panic!("a sampling answer"),
        }
    }
}
