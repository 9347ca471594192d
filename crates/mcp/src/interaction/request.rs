//! A plugin's requests to the client, checked and spelled as MCP. This runs
//! while the plugin's call still holds its concurrency slot (inside
//! `Runtime::invoke`, under the call's time limit), so the host parses at
//! most `[limits] concurrency` rounds of a plugin at once, and it counts
//! every byte before parsing any of it:
//!
//! - a round's text and JSON (messages, schemas, URLs, sampling messages,
//!   system prompt, stop sequences, preferences, tools) together stay within
//!   the plugin's `[limits] output`; a request past it is refused;
//! - each JSON text (a form schema, sampling `tools`, `modelPreferences`) is
//!   at most `schema_budget::MAX_SCHEMA_BYTES` and, parsed, within the schema
//!   node and depth bounds; a form schema also passes every tool-schema check
//!   and is the flat form MCP allows (`form_schema`);
//! - a URL elicitation goes only where `[interaction] url-allow` says.
//!
//! A refused request reaches the plugin as `refused(why)`; the client never
//! sees it.

use rmcp::model::InputRequest;
use serde_json::{Map, Value, json};

use super::{InputKind, MAX_PLUGIN_STATE, MAX_REQUESTS, form_schema};
use warden_plugins::schema_budget;
use warden_runtime::contract::types;
use warden_runtime::grants::InteractionGrant;
use warden_runtime::manifest::format_size;

/// What a round's requests are checked against.
pub struct RequestLimits<'a> {
    /// `[limits] output`: the most bytes of text and JSON one round may put to the client.
    pub output: u64,
    pub grant: &'a InteractionGrant,
    /// The manifest's file name, where a refusal says the fix goes.
    pub manifest: &'a str,
}

/// One round's requests, checked and converted.
#[derive(Debug)]
pub struct Round {
    /// The plugin's state, handed back with the answers.
    pub state: Vec<u8>,
    pub requests: Vec<Checked>,
}

/// One request of a round.
#[derive(Debug)]
pub struct Checked {
    pub key: String,
    pub kind: InputKind,
    /// A sampling request that offers the model tools.
    pub with_tools: bool,
    pub prepared: Prepared,
}

/// What became of one request.
#[derive(Debug)]
pub enum Prepared {
    /// The operator did not grant its kind: not looked at further.
    NotGranted,
    /// Ready for the client.
    Ready(InputRequest),
    /// Refused, and why (for the plugin); `denied` is the audit record's
    /// `denied` entry when a grant refused it.
    Refused { why: String, denied: Option<String> },
}

/// Checks one round that a plugin asked, and spells its requests as MCP.
/// `Err`: the round as a whole is malformed (the call fails with that text).
pub fn prepare(asked: types::InputRequired, limits: &RequestLimits<'_>) -> Result<Round, String> {
    check_round(&asked)?;
    let mut spent: u64 = 0;
    let requests = asked
        .requests
        .into_iter()
        .map(|keyed| {
            let (kind, with_tools) = kind_of(&keyed.request);
            let prepared = if !granted(kind, limits.grant) {
                Prepared::NotGranted
            } else {
                // Counted before anything is parsed; what is refused is not sent,
                // and does not count.
                let total = spent.saturating_add(bytes(&keyed.request));
                if total > limits.output {
                    Prepared::Refused {
                        why: format!(
                            "this round's requests would hold {total} bytes of text and JSON with this one, more \
                             than the plugin's {} `[limits] output` ({}); ask for less at once",
                            format_size(limits.output),
                            limits.manifest
                        ),
                        denied: None,
                    }
                } else {
                    match convert(&keyed.request, limits) {
                        Ok(request) => {
                            spent = total;
                            Prepared::Ready(request)
                        }
                        Err(Refusal { why, denied }) => Prepared::Refused { why, denied },
                    }
                }
            };
            Checked {
                key: keyed.key,
                kind,
                with_tools,
                prepared,
            }
        })
        .collect();
    Ok(Round {
        state: asked.state,
        requests,
    })
}

/// Whether the operator granted a kind of request.
pub fn granted(kind: InputKind, grant: &InteractionGrant) -> bool {
    match kind {
        InputKind::Elicit | InputKind::ElicitUrl => grant.elicit,
        InputKind::Sample => grant.sample,
        InputKind::Roots => grant.roots,
    }
}

fn kind_of(request: &types::InputRequest) -> (InputKind, bool) {
    match request {
        types::InputRequest::ElicitForm(_) => (InputKind::Elicit, false),
        types::InputRequest::ElicitUrl(_) => (InputKind::ElicitUrl, false),
        types::InputRequest::Sample(sample) => (InputKind::Sample, sample.tools.is_some()),
        types::InputRequest::ListRoots => (InputKind::Roots, false),
    }
}

/// The round as a whole: how many requests, the state's size, the keys.
fn check_round(asked: &types::InputRequired) -> Result<(), String> {
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
        warden_runtime::naming::check_item_name(key).map_err(|e| format!("request key {key:?}: {e}"))?;
    }
    keys.sort_unstable();
    if keys.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err("the plugin used one request key twice in a round".into());
    }
    Ok(())
}

/// The bytes of text and JSON a request would put to the client (binary
/// content as its base64).
fn bytes(request: &types::InputRequest) -> u64 {
    let len = |text: &str| text.len() as u64;
    match request {
        types::InputRequest::ElicitForm(form) => len(&form.message) + len(&form.requested_schema),
        types::InputRequest::ElicitUrl(url) => len(&url.message) + len(&url.url) + len(&url.elicitation_id),
        types::InputRequest::Sample(sample) => {
            let content = |content: &types::Content| match content {
                types::Content::Text(text) => len(text),
                types::Content::Image(blob) | types::Content::Audio(blob) => {
                    (blob.data.len() as u64).div_ceil(3) * 4 + len(&blob.mime_type)
                }
                // Refused when converted; what it holds still counts.
                _ => 0,
            };
            sample.messages.iter().map(|m| content(&m.content)).sum::<u64>()
                + sample.system_prompt.as_deref().map_or(0, len)
                + sample.stop_sequences.iter().map(|s| len(s)).sum::<u64>()
                + sample.model_preferences.as_deref().map_or(0, len)
                + sample.tools.as_deref().map_or(0, len)
        }
        types::InputRequest::ListRoots => 0,
    }
}

/// Why `convert` refused a request, before it becomes `Prepared::Refused`.
struct Refusal {
    why: String,
    denied: Option<String>,
}

fn refused(why: String) -> Refusal {
    Refusal { why, denied: None }
}

/// A JSON text of the plugin's, bounded before it is parsed and after.
fn bounded_json(text: &str, what: &str) -> Result<Value, Refusal> {
    schema_budget::check_text(text).map_err(|e| refused(format!("its {what} {e}")))?;
    let value: Value = serde_json::from_str(text).map_err(|e| refused(format!("its {what} is not JSON: {e}")))?;
    schema_budget::check_document(&value).map_err(|e| refused(format!("its {what} {e}")))?;
    Ok(value)
}

/// A plugin's request as MCP spells it.
fn convert(request: &types::InputRequest, limits: &RequestLimits<'_>) -> Result<InputRequest, Refusal> {
    let wire = match request {
        types::InputRequest::ElicitForm(form) => {
            let schema = bounded_json(&form.requested_schema, "requested schema")?;
            schema_budget::measure(&schema).map_err(|e| refused(format!("its requested schema {e}")))?;
            form_schema::check(&schema)
                .map_err(|why| refused(format!("its requested schema is not an MCP form: {why}")))?;
            json!({
                "method": "elicitation/create",
                "params": { "mode": "form", "message": form.message, "requestedSchema": schema }
            })
        }
        types::InputRequest::ElicitUrl(url) => {
            limits.grant.check_url(&url.url).map_err(|denial| Refusal {
                why: denial.describe(limits.manifest),
                denied: Some(denial.audit_entry()),
            })?;
            json!({
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": url.message,
                    "url": url.url,
                    "elicitationId": url.elicitation_id,
                }
            })
        }
        types::InputRequest::Sample(sample) => {
            let messages = sample
                .messages
                .iter()
                .map(|message| {
                    Ok(json!({
                        "role": match message.role { types::Role::User => "user", types::Role::Assistant => "assistant" },
                        "content": sampling_content(&message.content).map_err(refused)?,
                    }))
                })
                .collect::<Result<Vec<_>, Refusal>>()?;
            let mut params = Map::new();
            params.insert("messages".into(), Value::Array(messages));
            // Capped by the operator: a larger request is asked for the cap.
            params.insert(
                "maxTokens".into(),
                sample.max_tokens.min(limits.grant.max_tokens).into(),
            );
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
                params.insert(
                    "modelPreferences".into(),
                    bounded_json(preferences, "model preferences")?,
                );
            }
            if let Some(tools) = &sample.tools {
                params.insert("tools".into(), bounded_json(tools, "tools")?);
            }
            json!({ "method": "sampling/createMessage", "params": params })
        }
        types::InputRequest::ListRoots => json!({ "method": "roots/list" }),
    };
    serde_json::from_value(wire).map_err(|e| refused(format!("it is not a valid MCP request: {e}")))
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
