//! Interaction (contract 0.2.0): a tool, a read or a prompt asks the client for input
//! (elicitation, sampling, roots) through [`Input`], and is called again with the answers.

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    Content, ElicitAction, ElicitAnswer, ElicitForm, ElicitUrl, Error, InputAnswer, InputAnswers, InputRequest,
    InputRequired, KeyedAnswer, KeyedRequest, Role, Root, SamplingAnswer, SamplingMessage, SamplingRequest,
};

/// The answer is not there yet: the request has been recorded, and once the function returns
/// the SDK replies `input-required` with every request recorded in this round. The function
/// is then called again, from the start, with the answers.
///
/// Returned by the ask methods of [`Input`] as their `Err`, so that `?` ends the round early:
/// it converts into [`Error`], `String` and any `Box<dyn std::error::Error>`. Whatever the
/// function returns after recording a request is not used.
#[derive(Debug)]
pub struct Pending {
    _private: (),
}

impl fmt::Display for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("waiting for the client's input")
    }
}

impl std::error::Error for Pending {}

impl From<Pending> for Error {
    fn from(pending: Pending) -> Error {
        Error::Failed(pending.to_string())
    }
}

impl From<Pending> for String {
    fn from(pending: Pending) -> String {
        pending.to_string()
    }
}

/// The request was not put to the client, or the client could not answer it: why (the
/// operator did not grant it, it was over a limit, the client's error). An ordinary error:
/// fall back, or return it (its text is `refused: <why>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused: {}", self.0)
    }
}

impl std::error::Error for Refused {}

impl From<Refused> for Error {
    fn from(refused: Refused) -> Error {
        Error::Failed(refused.to_string())
    }
}

impl From<Refused> for String {
    fn from(refused: Refused) -> String {
        refused.to_string()
    }
}

/// An answer, or why there is none.
pub type Answer<T> = Result<T, Refused>;

/// What an ask method returns: `Err(Pending)` in the round that asks (`?` ends it), then
/// the [`Answer`] in the rounds after.
pub type Ask<T> = Result<Answer<T>, Pending>;

/// The user's answer to a form ([`Input::elicit`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited<T> {
    /// Submitted, with the form's content.
    Accepted(T),
    /// Explicitly declined.
    Declined,
    /// Dismissed without a choice.
    Cancelled,
}

/// The interaction of one call: the answers the host passed in (this round's, and those of
/// earlier rounds, which the SDK carries in the state), the plugin's own state, and the
/// requests recorded in this round.
///
/// A tool, resource or prompt function gets it by taking a `&mut Input` parameter. Each ask
/// method names its request with a key (1 to 64 characters from `A-Z a-z 0-9 _ -`): when an
/// answer under that key is there, it returns it (`Ok(answer)`); otherwise it records the
/// request and returns `Err(Pending)`. When the function returns after recording requests,
/// the SDK replies `input-required` with all of them and the state; the host puts them to
/// the client and calls the function again, with the same arguments, and the answers.
///
/// Ask only for what [`can_ask`](crate::can_ask) says may be asked, or be ready for a
/// [`Refused`] answer (or for the client being told it lacks a capability).
pub struct Input {
    first_round: bool,
    /// Answers under the keys this plugin asked for, earlier rounds' first.
    answers: Vec<(String, InputAnswer)>,
    state: Vec<u8>,
    requests: Vec<KeyedRequest>,
}

impl Default for Input {
    fn default() -> Self {
        Input::new(None)
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let answered: Vec<&str> = self.answers.iter().map(|(k, _)| k.as_str()).collect();
        let requested: Vec<&str> = self.requests.iter().map(|r| r.key.as_str()).collect();
        f.debug_struct("Input")
            .field("first_round", &self.first_round)
            .field("answered", &answered)
            .field("state", &self.state)
            .field("requested", &requested)
            .finish()
    }
}

/// How the SDK's part of the state starts.
const MAGIC: &[u8; 4] = b"wps1";

/// What the SDK keeps in the state between rounds, before the plugin's own bytes.
#[derive(Serialize, Deserialize, Default)]
struct Envelope {
    /// The keys of the last round's requests: only their answers are taken.
    asked: Vec<String>,
    /// Answers of earlier rounds.
    answers: Vec<(String, Stored)>,
}

/// An [`InputAnswer`] as JSON.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum Stored {
    Elicit {
        action: String,
        content: Option<String>,
    },
    Sample {
        role: String,
        content: String,
        text: Option<String>,
        model: String,
        stop_reason: Option<String>,
    },
    Roots {
        roots: Vec<(String, Option<String>)>,
    },
    Refused {
        reason: String,
    },
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

impl From<&InputAnswer> for Stored {
    fn from(answer: &InputAnswer) -> Stored {
        match answer {
            InputAnswer::Elicit(a) => Stored::Elicit {
                action: match a.action {
                    ElicitAction::Accept => "accept",
                    ElicitAction::Decline => "decline",
                    ElicitAction::Cancel => "cancel",
                }
                .into(),
                content: a.content.clone(),
            },
            InputAnswer::Sample(a) => Stored::Sample {
                role: role_name(a.role).into(),
                content: a.content.clone(),
                text: a.text.clone(),
                model: a.model.clone(),
                stop_reason: a.stop_reason.clone(),
            },
            InputAnswer::Roots(roots) => Stored::Roots {
                roots: roots.iter().map(|r| (r.uri.clone(), r.name.clone())).collect(),
            },
            InputAnswer::Refused(reason) => Stored::Refused { reason: reason.clone() },
        }
    }
}

impl From<Stored> for InputAnswer {
    fn from(stored: Stored) -> InputAnswer {
        match stored {
            Stored::Elicit { action, content } => InputAnswer::Elicit(ElicitAnswer {
                action: match action.as_str() {
                    "accept" => ElicitAction::Accept,
                    "decline" => ElicitAction::Decline,
                    _ => ElicitAction::Cancel,
                },
                content,
            }),
            Stored::Sample {
                role,
                content,
                text,
                model,
                stop_reason,
            } => InputAnswer::Sample(SamplingAnswer {
                role: if role == "user" { Role::User } else { Role::Assistant },
                content,
                text,
                model,
                stop_reason,
            }),
            Stored::Roots { roots } => {
                InputAnswer::Roots(roots.into_iter().map(|(uri, name)| Root { uri, name }).collect())
            }
            Stored::Refused { reason } => InputAnswer::Refused(reason),
        }
    }
}

/// The SDK's envelope and the plugin's own state, when `state` starts with one.
fn open(state: &[u8]) -> Option<(Envelope, Vec<u8>)> {
    let rest = state.strip_prefix(MAGIC)?;
    let length = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let json = rest.get(4..4 + length)?;
    let envelope = serde_json::from_slice(json).ok()?;
    Some((envelope, rest[4 + length..].to_vec()))
}

fn seal(envelope: &Envelope, own: &[u8]) -> Vec<u8> {
    let json = serde_json::to_vec(envelope).expect("the envelope is JSON");
    let mut state = Vec::with_capacity(8 + json.len() + own.len());
    state.extend_from_slice(MAGIC);
    state.extend_from_slice(&(json.len() as u32).to_le_bytes());
    state.extend_from_slice(&json);
    state.extend_from_slice(own);
    state
}

fn is_valid_key(key: &str) -> bool {
    (1..=64).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The form [`Input::confirm`] shows: one boolean field, `confirm`.
pub(crate) const CONFIRM_SCHEMA: &str = r#"{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm","default":false}},"required":["confirm"]}"#;

#[derive(Deserialize)]
struct Confirm {
    confirm: bool,
}

impl Input {
    /// The interaction of a call, from what the host passed: `None` on the first round,
    /// the answers to the last `input-required` on each later one. Plugins get theirs as a
    /// `&mut Input` parameter; this builds one to test a function on the host.
    pub fn new(input: Option<InputAnswers>) -> Input {
        let Some(input) = input else {
            return Input {
                first_round: true,
                answers: Vec::new(),
                state: Vec::new(),
                requests: Vec::new(),
            };
        };
        let (asked, mut answers, state) = match open(&input.state) {
            Some((envelope, own)) => {
                let carried = envelope
                    .answers
                    .into_iter()
                    .map(|(key, stored)| (key, InputAnswer::from(stored)))
                    .collect();
                (Some(envelope.asked), carried, own)
            }
            // Not state this SDK wrote: all of it is the plugin's, and every answer counts.
            None => (None, Vec::new(), input.state),
        };
        for KeyedAnswer { key, answer } in input.answers {
            let wanted = asked.as_ref().is_none_or(|asked| asked.contains(&key));
            if wanted && !answers.iter().any(|(k, _)| *k == key) {
                answers.push((key, answer));
            }
        }
        Input {
            first_round: false,
            answers,
            state,
            requests: Vec::new(),
        }
    }

    /// True on the first round: nothing has been asked yet.
    pub fn is_first_round(&self) -> bool {
        self.first_round
    }

    /// The plugin's own state: empty on the first round, then what it set (or had) when it
    /// last asked. It travels with the requests and comes back with the answers (through the
    /// client on some transports, signed, so it cannot be altered — but it can be read:
    /// keep secrets out). The SDK adds the answers of earlier rounds to it; the whole must
    /// stay under 16 KiB.
    pub fn state(&self) -> &[u8] {
        &self.state
    }

    /// Sets the state handed back on the next round.
    pub fn set_state(&mut self, state: impl Into<Vec<u8>>) {
        self.state = state.into();
    }

    /// The answer under `key`, as the host passed it, if there is one.
    pub fn answer(&self, key: &str) -> Option<&InputAnswer> {
        self.answers.iter().find(|(k, _)| k == key).map(|(_, a)| a)
    }

    /// Every answer there is (this round's and earlier rounds'), by key.
    pub fn answers(&self) -> impl Iterator<Item = (&str, &InputAnswer)> {
        self.answers.iter().map(|(k, a)| (k.as_str(), a))
    }

    /// The requests recorded in this round.
    pub fn requests(&self) -> &[KeyedRequest] {
        &self.requests
    }

    /// Whether this call may ask for `what`: [`can_ask`](crate::can_ask). Only inside a
    /// component (it asks the host).
    pub fn can_ask(&self, what: crate::Interaction) -> bool {
        crate::can_ask(what)
    }

    /// Any request: its answer, as the host passed it (a refusal as [`Refused`]), or
    /// `Err(Pending)` after recording it.
    pub fn ask(&mut self, key: &str, request: InputRequest) -> Ask<InputAnswer> {
        if !is_valid_key(key) {
            return Ok(Err(Refused(format!(
                "{key:?} is not a valid key: 1 to 64 characters from A-Z a-z 0-9 _ -"
            ))));
        }
        match self.answer(key) {
            Some(InputAnswer::Refused(reason)) => Ok(Err(Refused(reason.clone()))),
            Some(answer) => Ok(Ok(answer.clone())),
            None => {
                if !self.requests.iter().any(|r| r.key == key) {
                    self.requests.push(KeyedRequest {
                        key: key.to_string(),
                        request,
                    });
                }
                Err(Pending { _private: () })
            }
        }
    }

    /// A form (elicitation, form mode) whose content is `T`: its fields, with their doc
    /// comments, are the form's (strings, numbers, integers, booleans or enums, as MCP
    /// allows). Content that does not match `T` is [`Refused`].
    pub fn elicit<T: DeserializeOwned + JsonSchema>(&mut self, key: &str, message: &str) -> Ask<Elicited<T>> {
        let schema = crate::schema::input_schema::<T>();
        Ok(self
            .elicit_form(key, message, &schema)?
            .and_then(|answer| match answer.action {
                ElicitAction::Accept => {
                    let content = answer.content.as_deref().unwrap_or("{}");
                    serde_json::from_str(content)
                        .map(Elicited::Accepted)
                        .map_err(|e| Refused(format!("the form's content does not match what was asked: {e}")))
                }
                ElicitAction::Decline => Ok(Elicited::Declined),
                ElicitAction::Cancel => Ok(Elicited::Cancelled),
            }))
    }

    /// A form (elicitation, form mode) with your own `requested_schema` (a JSON Schema
    /// object, as text), answered as the host passed it.
    pub fn elicit_form(&mut self, key: &str, message: &str, requested_schema: &str) -> Ask<ElicitAnswer> {
        let request = InputRequest::ElicitForm(ElicitForm {
            message: message.to_string(),
            requested_schema: requested_schema.to_string(),
        });
        Ok(self.ask(key, request)?.and_then(|answer| match answer {
            InputAnswer::Elicit(answer) => Ok(answer),
            _ => Err(wrong_kind(key, "an elicitation")),
        }))
    }

    /// A yes-or-no question: a form with one boolean field, `confirm`. `true` only when the
    /// user submitted it checked; `false` when unchecked, declined or cancelled.
    pub fn confirm(&mut self, key: &str, message: &str) -> Ask<bool> {
        Ok(self
            .elicit_form(key, message, CONFIRM_SCHEMA)?
            .and_then(|answer| match (answer.action, answer.content) {
                (ElicitAction::Accept, Some(content)) => serde_json::from_str::<Confirm>(&content)
                    .map(|c| c.confirm)
                    .map_err(|e| Refused(format!("the confirmation's content is not {{\"confirm\": bool}}: {e}"))),
                _ => Ok(false),
            }))
    }

    /// Asks the user to open `url` (elicitation, URL mode), e.g. to sign in elsewhere;
    /// `elicitation_id` names it. The answer is what the user did: accept, decline or cancel.
    pub fn elicit_url(&mut self, key: &str, message: &str, url: &str, elicitation_id: &str) -> Ask<ElicitAction> {
        let request = InputRequest::ElicitUrl(ElicitUrl {
            message: message.to_string(),
            url: url.to_string(),
            elicitation_id: elicitation_id.to_string(),
        });
        Ok(self.ask(key, request)?.and_then(|answer| match answer {
            InputAnswer::Elicit(answer) => Ok(answer.action),
            _ => Err(wrong_kind(key, "an elicitation")),
        }))
    }

    /// Asks the client's model (sampling). See [`SamplingRequest::new`].
    pub fn sample(&mut self, key: &str, request: SamplingRequest) -> Ask<SamplingAnswer> {
        Ok(self
            .ask(key, InputRequest::Sample(request))?
            .and_then(|answer| match answer {
                InputAnswer::Sample(answer) => Ok(answer),
                _ => Err(wrong_kind(key, "a sampling answer")),
            }))
    }

    /// The client's roots: the folders or URIs it works in.
    pub fn roots(&mut self, key: &str) -> Ask<Vec<Root>> {
        Ok(self.ask(key, InputRequest::ListRoots)?.and_then(|answer| match answer {
            InputAnswer::Roots(roots) => Ok(roots),
            _ => Err(wrong_kind(key, "roots")),
        }))
    }

    /// The `input-required` reply, when requests were recorded: the requests, and the state
    /// (the SDK's envelope with every answer so far, then the plugin's own bytes).
    pub fn into_input_required(self) -> Option<InputRequired> {
        if self.requests.is_empty() {
            return None;
        }
        let envelope = Envelope {
            asked: self.requests.iter().map(|r| r.key.clone()).collect(),
            answers: self.answers.iter().map(|(k, a)| (k.clone(), Stored::from(a))).collect(),
        };
        Some(InputRequired {
            state: seal(&envelope, &self.state),
            requests: self.requests,
        })
    }
}

fn wrong_kind(key: &str, wanted: &str) -> Refused {
    Refused(format!("the answer under {key:?} is not {wanted}"))
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens (capped by the operator), with no messages
    /// yet: add them with [`user`](Self::user) and [`assistant`](Self::assistant).
    pub fn new(max_tokens: u32) -> Self {
        SamplingRequest {
            messages: Vec::new(),
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            tools: None,
        }
    }

    /// Adds a text message from the user.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage::user(text));
        self
    }

    /// Adds a text message from the assistant.
    pub fn assistant(mut self, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage::assistant(text));
        self
    }

    /// Sets the system prompt.
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets the temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets MCP `modelPreferences` (hints, cost, speed and intelligence priorities).
    pub fn model_preferences(mut self, preferences: &Value) -> Self {
        self.model_preferences = Some(preferences.to_string());
        self
    }
}

impl SamplingMessage {
    /// A text message from the user.
    pub fn user(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: Content::Text(text.into()),
        }
    }

    /// A text message from the assistant.
    pub fn assistant(text: impl Into<String>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: Content::Text(text.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elicit(action: ElicitAction, content: Option<&str>) -> InputAnswer {
        InputAnswer::Elicit(ElicitAnswer {
            action,
            content: content.map(str::to_string),
        })
    }

    fn keyed(key: &str, answer: InputAnswer) -> KeyedAnswer {
        KeyedAnswer {
            key: key.into(),
            answer,
        }
    }

    #[test]
    fn a_first_round_records_requests_once_and_replies_with_them() {
        let mut input = Input::new(None);
        assert!(input.is_first_round() && input.state().is_empty());
        assert!(input.confirm("ok", "Go?").is_err());
        assert!(input.confirm("ok", "Go?").is_err());
        assert!(input.roots("roots").is_err());
        input.set_state(b"mine".to_vec());
        let required = input.into_input_required().unwrap();
        let keys: Vec<&str> = required.requests.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["ok", "roots"]);
        assert!(matches!(&required.requests[0].request,
            InputRequest::ElicitForm(f) if f.message == "Go?" && f.requested_schema == CONFIRM_SCHEMA));
        assert!(required.state.starts_with(MAGIC) && required.state.ends_with(b"mine"));
        assert!(Input::new(None).into_input_required().is_none());
    }

    #[test]
    fn answers_come_back_and_are_carried_to_later_rounds() {
        let mut first = Input::new(None);
        let _ = first.confirm("ok", "Go?");
        first.set_state(b"s1".to_vec());
        let state = first.into_input_required().unwrap().state;

        // Round 2: the confirmation, and a key nobody asked for.
        let mut second = Input::new(Some(InputAnswers {
            answers: vec![
                keyed("ok", elicit(ElicitAction::Accept, Some(r#"{"confirm":true}"#))),
                keyed("stray", InputAnswer::Refused("?".into())),
            ],
            state,
        }));
        assert!(!second.is_first_round());
        assert_eq!(second.state(), b"s1");
        assert_eq!(second.confirm("ok", "Go?").unwrap(), Ok(true));
        assert!(second.answer("stray").is_none());
        assert!(second.sample("s", SamplingRequest::new(10).user("hi")).is_err());
        let state = second.into_input_required().unwrap().state;

        // Round 3: only the sampling answer comes; the confirmation is carried.
        let mut third = Input::new(Some(InputAnswers {
            answers: vec![keyed(
                "s",
                InputAnswer::Sample(SamplingAnswer {
                    role: Role::Assistant,
                    content: r#"{"type":"text","text":"hello"}"#.into(),
                    text: Some("hello".into()),
                    model: "m".into(),
                    stop_reason: None,
                }),
            )],
            state,
        }));
        assert_eq!(third.confirm("ok", "Go?").unwrap(), Ok(true));
        let sampled = third.sample("s", SamplingRequest::new(10)).unwrap().unwrap();
        assert_eq!((sampled.text.as_deref(), sampled.model.as_str()), (Some("hello"), "m"));
        assert_eq!(third.state(), b"s1");
        assert!(third.into_input_required().is_none());
    }

    #[test]
    fn refusals_declines_and_wrong_kinds() {
        let answers = vec![
            keyed("no", elicit(ElicitAction::Decline, None)),
            keyed("unchecked", elicit(ElicitAction::Accept, Some(r#"{"confirm":false}"#))),
            keyed("refused", InputAnswer::Refused("not granted".into())),
            keyed(
                "roots",
                InputAnswer::Roots(vec![Root {
                    uri: "file:///w".into(),
                    name: None,
                }]),
            ),
        ];
        let mut input = Input::new(Some(InputAnswers {
            answers,
            state: b"raw".to_vec(),
        }));
        // Not this SDK's state: all of it is the plugin's.
        assert_eq!(input.state(), b"raw");
        assert_eq!(input.confirm("no", "?").unwrap(), Ok(false));
        assert_eq!(input.confirm("unchecked", "?").unwrap(), Ok(false));
        let refused = input.sample("refused", SamplingRequest::new(5)).unwrap().unwrap_err();
        assert_eq!(refused.to_string(), "refused: not granted");
        assert!(input.confirm("roots", "?").unwrap().is_err());
        assert_eq!(input.roots("roots").unwrap().unwrap()[0].uri, "file:///w");
        assert!(input.roots("bad key!").unwrap().is_err());
        assert!(input.into_input_required().is_none());
    }

    #[test]
    fn typed_forms() {
        #[derive(Deserialize, JsonSchema, Debug, PartialEq)]
        struct Name {
            /// Your name.
            name: String,
        }
        let mut input = Input::new(None);
        assert!(input.elicit::<Name>("who", "Who are you?").is_err());
        let required = input.into_input_required().unwrap();
        let InputRequest::ElicitForm(form) = &required.requests[0].request else {
            panic!("not a form")
        };
        let schema: Value = serde_json::from_str(&form.requested_schema).unwrap();
        assert_eq!(schema["properties"]["name"]["type"], "string");
        let mut input = Input::new(Some(InputAnswers {
            answers: vec![
                keyed("who", elicit(ElicitAction::Accept, Some(r#"{"name":"Ada"}"#))),
                keyed("bad", elicit(ElicitAction::Accept, Some(r#"{"nom":1}"#))),
                keyed("gone", elicit(ElicitAction::Cancel, None)),
            ],
            state: required.state,
        }));
        // Only "who" was asked for: the others are ignored.
        assert_eq!(
            input.elicit::<Name>("who", "?").unwrap(),
            Ok(Elicited::Accepted(Name { name: "Ada".into() }))
        );
        assert!(input.elicit::<Name>("bad", "?").is_err());
        let mut all = Input::new(Some(InputAnswers {
            answers: vec![
                keyed("bad", elicit(ElicitAction::Accept, Some(r#"{"nom":1}"#))),
                keyed("gone", elicit(ElicitAction::Cancel, None)),
            ],
            state: Vec::new(),
        }));
        assert!(all.elicit::<Name>("bad", "?").unwrap().is_err());
        assert_eq!(all.elicit::<Name>("gone", "?").unwrap(), Ok(Elicited::Cancelled));
    }
}
