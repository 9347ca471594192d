//! Rounds: a fixture is called again, in a fresh instance, with the answers to what it asked and
//! the state it handed back. It keeps the answers gathered so far in that state, so that each
//! round sees all of them and a later round asks only for what is still missing (the client
//! may retry with wrong keys, or without the state at all).

use crate::warden::plugin::types::{
    ElicitAction, ElicitAnswer, InputAnswer, InputAnswers, InputRequired, KeyedRequest, Role, Root, SamplingAnswer,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The most state a plugin may hand back (contract 0.2.0).
const MAX_STATE: usize = 16 * 1024;

/// What a fixture decides in one round.
pub enum Step<T> {
    /// Ask the client these first.
    Ask(Vec<KeyedRequest>),
    Done(T),
}

/// What a round answers: the result, or what to ask with the state to carry.
pub enum Reply<T> {
    Done(T),
    InputRequired(InputRequired),
}

/// Why an answer gives no value.
pub enum Lack {
    /// There is no usable answer: ask (again).
    Ask,
    /// There will be none, for this reason (declined, refused).
    Without(String),
}

/// The answers gathered for one fixture: from its state, then from this round.
pub struct Answers {
    fixture: &'static str,
    restored: bool,
    gathered: BTreeMap<String, InputAnswer>,
}

/// Runs one round of `fixture`, which asks only under `keys`: answers under other keys are
/// ignored. The state handed back names the fixture and holds the answers gathered so far.
pub fn round<T>(
    fixture: &'static str,
    keys: &[&str],
    input: Option<InputAnswers>,
    step: impl FnOnce(&Answers) -> Step<T>,
) -> Reply<T> {
    let answers = Answers::gather(fixture, keys, input);
    match step(&answers) {
        Step::Done(result) => Reply::Done(result),
        Step::Ask(requests) => Reply::InputRequired(InputRequired {
            requests,
            state: answers.state(),
        }),
    }
}

impl Answers {
    fn gather(fixture: &'static str, keys: &[&str], input: Option<InputAnswers>) -> Self {
        let mut answers = Answers {
            fixture,
            restored: false,
            gathered: BTreeMap::new(),
        };
        let Some(input) = input else {
            return answers;
        };
        if let Some(saved) = saved(fixture, &input.state) {
            answers.restored = true;
            for (key, answer) in saved {
                if let Some(answer) = answer_from_json(&answer) {
                    answers.gathered.insert(key, answer);
                }
            }
        }
        for keyed in input.answers {
            if keys.contains(&keyed.key.as_str()) {
                answers.gathered.insert(keyed.key, keyed.answer);
            }
        }
        answers
    }

    /// Whether the state came back as this fixture left it.
    pub fn restored(&self) -> bool {
        self.restored
    }

    pub fn get(&self, key: &str) -> Option<&InputAnswer> {
        self.gathered.get(key)
    }

    /// The state to hand back; without the answers if they would not fit.
    fn state(&self) -> Vec<u8> {
        let answers: Map<String, Value> = self
            .gathered
            .iter()
            .map(|(key, answer)| (key.clone(), answer_to_json(answer)))
            .collect();
        let state = json!({ "fixture": self.fixture, "answers": answers }).to_string();
        if state.len() <= MAX_STATE {
            state.into_bytes()
        } else {
            json!({ "fixture": self.fixture, "answers": {} })
                .to_string()
                .into_bytes()
        }
    }

    /// The elicitation answered under `key`, whatever the user chose.
    pub fn elicited(&self, key: &str) -> Result<&ElicitAnswer, Lack> {
        match self.get(key) {
            Some(InputAnswer::Elicit(answer)) => Ok(answer),
            Some(InputAnswer::Refused(reason)) => Err(refused(reason)),
            _ => Err(Lack::Ask),
        }
    }

    /// The form accepted under `key`: its content (`null` when it had none).
    pub fn form(&self, key: &str) -> Result<Value, Lack> {
        let answer = self.elicited(key)?;
        match answer.action {
            ElicitAction::Accept => Ok(content(answer)),
            action => Err(Lack::Without(format!("the user chose to {}", action_name(action)))),
        }
    }

    /// The string `field` of the form accepted under `key`; asked again when it is missing.
    pub fn form_string(&self, key: &str, field: &str) -> Result<String, Lack> {
        match &self.form(key)?[field] {
            Value::String(value) => Ok(value.clone()),
            _ => Err(Lack::Ask),
        }
    }

    /// The text of the model's answer under `key`.
    pub fn sampled_text(&self, key: &str) -> Result<String, Lack> {
        match self.get(key) {
            Some(InputAnswer::Sample(answer)) => Ok(sampled(answer)),
            Some(InputAnswer::Refused(reason)) => Err(refused(reason)),
            _ => Err(Lack::Ask),
        }
    }

    /// The client's roots, answered under `key`.
    pub fn roots(&self, key: &str) -> Result<&[Root], Lack> {
        match self.get(key) {
            Some(InputAnswer::Roots(roots)) => Ok(roots),
            Some(InputAnswer::Refused(reason)) => Err(refused(reason)),
            _ => Err(Lack::Ask),
        }
    }
}

fn refused(reason: &str) -> Lack {
    Lack::Without(format!("the request was refused ({reason})"))
}

/// The answers saved in `state`, when it is a state this fixture left.
fn saved(fixture: &str, state: &[u8]) -> Option<Map<String, Value>> {
    let mut state: Value = serde_json::from_slice(state).ok()?;
    if state["fixture"] != fixture {
        return None;
    }
    match state["answers"].take() {
        Value::Object(answers) => Some(answers),
        _ => None,
    }
}

pub fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

fn action_from_name(name: &str) -> Option<ElicitAction> {
    match name {
        "accept" => Some(ElicitAction::Accept),
        "decline" => Some(ElicitAction::Decline),
        "cancel" => Some(ElicitAction::Cancel),
        _ => None,
    }
}

/// An elicitation's content as JSON: `null` when there is none (or it is not JSON).
pub fn content(answer: &ElicitAnswer) -> Value {
    answer
        .content
        .as_deref()
        .and_then(|content| serde_json::from_str(content).ok())
        .unwrap_or(Value::Null)
}

/// The text of a sampling answer: its text blocks, else its content as JSON.
pub fn sampled(answer: &SamplingAnswer) -> String {
    answer.text.clone().unwrap_or_else(|| answer.content.clone())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn answer_to_json(answer: &InputAnswer) -> Value {
    match answer {
        InputAnswer::Elicit(answer) => json!({ "elicit": {
            "action": action_name(answer.action),
            "content": answer.content,
        }}),
        InputAnswer::Sample(answer) => json!({ "sample": {
            "role": role_name(answer.role),
            "content": answer.content,
            "text": answer.text,
            "model": answer.model,
            "stopReason": answer.stop_reason,
        }}),
        InputAnswer::Roots(roots) => json!({ "roots": roots
            .iter()
            .map(|root| json!({ "uri": root.uri, "name": root.name }))
            .collect::<Vec<_>>() }),
        InputAnswer::Refused(reason) => json!({ "refused": reason }),
    }
}

fn answer_from_json(value: &Value) -> Option<InputAnswer> {
    let string = |value: &Value| value.as_str().map(str::to_string);
    if let Some(answer) = value.get("elicit") {
        return Some(InputAnswer::Elicit(ElicitAnswer {
            action: action_from_name(answer["action"].as_str()?)?,
            content: string(&answer["content"]),
        }));
    }
    if let Some(answer) = value.get("sample") {
        return Some(InputAnswer::Sample(SamplingAnswer {
            role: if answer["role"] == "user" {
                Role::User
            } else {
                Role::Assistant
            },
            content: string(&answer["content"])?,
            text: string(&answer["text"]),
            model: string(&answer["model"])?,
            stop_reason: string(&answer["stopReason"]),
        }));
    }
    if let Some(roots) = value.get("roots") {
        let roots = roots.as_array()?.iter().map(|root| {
            Some(Root {
                uri: string(&root["uri"])?,
                name: string(&root["name"]),
            })
        });
        return Some(InputAnswer::Roots(roots.collect::<Option<_>>()?));
    }
    value.get("refused").and_then(string).map(InputAnswer::Refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warden::plugin::types::KeyedAnswer;

    fn accepted(content: &str) -> InputAnswer {
        InputAnswer::Elicit(ElicitAnswer {
            action: ElicitAction::Accept,
            content: Some(content.to_string()),
        })
    }

    fn input(answers: Vec<(&str, InputAnswer)>, state: Vec<u8>) -> Option<InputAnswers> {
        Some(InputAnswers {
            answers: answers
                .into_iter()
                .map(|(key, answer)| KeyedAnswer {
                    key: key.to_string(),
                    answer,
                })
                .collect(),
            state,
        })
    }

    #[test]
    fn answers_survive_the_state() {
        let answers = vec![
            ("a", accepted(r#"{"name":"Alice"}"#)),
            (
                "b",
                InputAnswer::Sample(SamplingAnswer {
                    role: Role::Assistant,
                    content: r#"{"type":"text","text":"Hi"}"#.to_string(),
                    text: Some("Hi".to_string()),
                    model: "m".to_string(),
                    stop_reason: None,
                }),
            ),
            (
                "c",
                InputAnswer::Roots(vec![Root {
                    uri: "file:///r".to_string(),
                    name: None,
                }]),
            ),
            ("d", InputAnswer::Refused("no".to_string())),
        ];
        let first = Answers::gather("f", &["a", "b", "c", "d"], input(answers, Vec::new()));
        assert!(!first.restored());
        let second = Answers::gather("f", &["a", "b", "c", "d"], input(Vec::new(), first.state()));
        assert!(second.restored());
        assert_eq!(second.form_string("a", "name").ok().as_deref(), Some("Alice"));
        assert_eq!(second.sampled_text("b").ok().as_deref(), Some("Hi"));
        assert_eq!(
            second.roots("c").map(|roots| roots[0].uri.clone()).ok().as_deref(),
            Some("file:///r")
        );
        assert!(matches!(second.sampled_text("d"), Err(Lack::Without(_))));
    }

    #[test]
    fn unknown_keys_and_foreign_state_are_ignored() {
        let answers = Answers::gather(
            "f",
            &["a"],
            input(
                vec![("extra", accepted("{}"))],
                br#"{"fixture":"g","answers":{}}"#.to_vec(),
            ),
        );
        assert!(!answers.restored());
        assert!(answers.get("extra").is_none());
        assert!(matches!(answers.form("a"), Err(Lack::Ask)));
    }
}
