//! A 2026-07-28 retry: the client's `inputResponses` and the `requestState`
//! Warden sealed when it asked. Answers are believed only when they answer
//! what was asked:
//!
//! - the state must open with this server's key, for this caller, plugin,
//!   request and arguments, unexpired — and unused: it is accepted once
//!   (`used_states`);
//! - each answer's key must be one the sealed round asked, of the kind it
//!   asked (an elicitation answer for an elicitation), a kind the operator
//!   still grants; anything else is refused `-32602`, before any plugin runs;
//! - `inputResponses` without any `requestState` answer nothing that was
//!   asked yet: the call starts over, and they count only as answers given
//!   ahead to what its first round then asks (`answered_ahead`) — each under
//!   a key that round asks, of the kind it asks, which the operator grants
//!   and the client declared; when the round asks something they do not
//!   answer, none is used and the client is asked as usual. Nothing else in
//!   them reaches the plugin;
//! - on the 2025-11-25 wire, where neither field exists (Warden asks over
//!   the session instead), either is refused `-32602`.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{InputResponses, RequestStateCodec};
use serde_json::Value;

use super::used_states::{Refused, UsedStates};
use super::{Binding, Carried, InputKind, Retry, refused_answers, request, unbase64};
use warden_runtime::contract::types;
use warden_runtime::grants::InteractionGrant;

/// What a retry is checked against.
pub struct Resumption<'a> {
    pub codec: &'a RequestStateCodec,
    pub binding: &'a Binding,
    /// What the operator grants the plugin now.
    pub grant: &'a InteractionGrant,
    pub used: &'a UsedStates,
    /// The request came over the 2026-07-28 wire.
    pub stateless: bool,
}

/// The round to run first, and the answers to hand the plugin with it.
pub fn resume(resumption: &Resumption<'_>, retry: Retry<'_>) -> Result<(u32, Option<types::InputAnswers>), McpError> {
    let invalid = |why: String| McpError::invalid_params(why, None);
    if !resumption.stateless {
        if retry.responses.is_some() || retry.state.is_some() {
            return Err(invalid(
                "`inputResponses` and `requestState` belong to the 2026-07-28 protocol; on 2025-11-25 the \
                 server asks the client during the call — call again without them"
                    .into(),
            ));
        }
        return Ok((1, None));
    }
    let Some(sealed) = retry.state else {
        // Answers given ahead are matched to what round 1 asks (`answered_ahead`).
        return Ok((1, None));
    };
    let carried: Carried = resumption
        .codec
        .open_json_with(sealed, &resumption.binding.bytes)
        .map_err(|e| {
            invalid(format!(
                "requestState is not one this server issued for this caller, request and arguments, \
                 or it has expired ({e}); call again without it"
            ))
        })?;
    let state = unbase64(&carried.state).map_err(|_| invalid("requestState is malformed".into()))?;
    let mut answers = refused_answers(carried.refused.into_iter().collect());
    for (key, value) in retry.responses.into_iter().flatten() {
        let answer = check_answer(&carried.asked, resumption.grant, key, value)
            .map_err(|why| invalid(format!("inputResponses.{key}: {why}")))?;
        answers.push(types::KeyedAnswer {
            key: key.clone(),
            answer,
        });
    }
    // Only a retry that is otherwise good uses the state up: a client can
    // correct a malformed answer and send it again.
    resumption.used.use_once(sealed).map_err(|refused| match refused {
        Refused::Replayed => {
            invalid("requestState has been used already: each one continues a call once; call again without it".into())
        }
        Refused::Full => McpError::internal_error(
            "too many interactive calls were continued recently for this server to remember another; \
             try again in a few minutes"
                .to_string(),
            None,
        ),
    })?;
    Ok((carried.round + 1, Some(types::InputAnswers { answers, state })))
}

/// `inputResponses` sent without a `requestState`, against what the call's
/// first round has just asked (`asked`: only requests the operator grants
/// and the client declared): the answers when every asked key has one, each
/// of the kind asked; `None` when something asked is unanswered (then none is
/// used, and the client is asked). Keys not asked are ignored, as SEP-2322
/// advises for a client that answers ahead; an asked key answered with
/// another kind is refused `-32602`.
pub fn answered_ahead(
    responses: &InputResponses,
    asked: &BTreeMap<String, InputKind>,
    grant: &InteractionGrant,
) -> Result<Option<Vec<types::KeyedAnswer>>, McpError> {
    let mut answers = Vec::new();
    for key in asked.keys() {
        let Some(value) = responses.get(key) else {
            return Ok(None);
        };
        let answer = check_answer(asked, grant, key, value)
            .map_err(|why| McpError::invalid_params(format!("inputResponses.{key}: {why}"), None))?;
        answers.push(types::KeyedAnswer {
            key: key.clone(),
            answer,
        });
    }
    Ok(Some(answers))
}

/// One answer, against what its round asked and what is granted now.
fn check_answer(
    asked: &BTreeMap<String, InputKind>,
    grant: &InteractionGrant,
    key: &str,
    value: &Value,
) -> Result<types::InputAnswer, String> {
    let kind = *asked.get(key).ok_or_else(|| {
        let keys: Vec<&str> = asked.keys().map(String::as_str).collect();
        format!(
            "this round did not ask for `{key}`; answer only what it asked ({})",
            keys.join(", ")
        )
    })?;
    if !request::granted(kind, grant) {
        return Err(format!(
            "the operator no longer grants {} to this plugin",
            kind.describe()
        ));
    }
    parse_answer(kind, value)
}

/// A client's result as the plugin receives it.
pub fn parse_answer(kind: InputKind, value: &Value) -> Result<types::InputAnswer, String> {
    let object = value.as_object().ok_or("not a JSON object")?;
    Ok(match kind {
        InputKind::Elicit | InputKind::ElicitUrl => {
            let action = match object.get("action").and_then(Value::as_str) {
                Some("accept") => types::ElicitAction::Accept,
                Some("decline") => types::ElicitAction::Decline,
                Some("cancel") => types::ElicitAction::Cancel,
                _ => {
                    return Err(
                        "`action` must be \"accept\", \"decline\" or \"cancel\" (an elicitation result)".into(),
                    );
                }
            };
            let content = match object.get("content") {
                None | Some(Value::Null) => None,
                Some(Value::Object(_)) if kind == InputKind::ElicitUrl => {
                    return Err("a URL elicitation's result has no `content`".into());
                }
                Some(content @ Value::Object(_)) => Some(content.to_string()),
                Some(_) => return Err("`content` must be an object".into()),
            };
            types::InputAnswer::Elicit(types::ElicitAnswer { action, content })
        }
        InputKind::Sample => {
            let role = match object.get("role").and_then(Value::as_str) {
                Some("user") => types::Role::User,
                Some("assistant") => types::Role::Assistant,
                _ => return Err("`role` must be \"user\" or \"assistant\" (a sampling result)".into()),
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
        InputKind::Roots => {
            let roots = object
                .get("roots")
                .and_then(Value::as_array)
                .ok_or("`roots` must be an array (a roots result)")?
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
