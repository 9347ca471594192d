//! Interaction, both ways: a plugin's requests to the client, checked and
//! spelled as MCP (`interaction::request::prepare`), and a client's answers
//! with a sealed `requestState` (`interaction::answers::resume`).
//!
//! Input: text. Starting with `{`, it is a client's `inputResponses` (a JSON
//! object) retried with a state Warden sealed for a round that asked `form`
//! (an elicitation), `login` (a URL elicitation), `model` (sampling) and
//! `roots`; otherwise each line is one request a plugin asks: `f<schema>` a
//! form with that schema, `m<message>` a form with that message, `u<url>` a
//! URL elicitation, `t<tools>` sampling with those tools, `p<preferences>`
//! sampling with those model preferences.
//!
//! Requests: a request let through is one the checks accept — its schema is a
//! flat MCP form, its URL allowlisted — and those let through hold at most
//! the output limit. Answers: accepted only for keys the round asked, each of
//! the kind asked; the state is then used up (a second retry is refused); a
//! refused retry leaves it unused. The same answers without a state
//! (`answered_ahead`) count only when they answer every key asked, and then
//! exactly those keys.

use std::collections::BTreeMap;

use serde_json::Value;
use warden_mcp::interaction::answers::{self, Resumption};
use warden_mcp::interaction::request::{self, Prepared, RequestLimits};
use warden_mcp::interaction::{self, Binding, InputKind, Retry, UsedStates, form_schema};
use warden_runtime::contract::types;
use warden_runtime::grants::{HttpRule, InteractionGrant};

/// A small `[limits] output`, so that the fuzzer reaches it.
const OUTPUT: u64 = 4096;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let grant = InteractionGrant {
        elicit: true,
        sample: true,
        roots: true,
        url_allow: vec![
            HttpRule::parse("login.example.com").unwrap(),
            HttpRule::parse("http://127.0.0.1:8080").unwrap(),
        ],
        ..InteractionGrant::default()
    };
    if text.starts_with('{') {
        check_answers(text, &grant);
    } else {
        check_requests(text, &grant);
    }
}

fn sampling(tools: Option<String>, preferences: Option<String>) -> types::InputRequest {
    types::InputRequest::Sample(types::SamplingRequest {
        messages: vec![types::SamplingMessage {
            role: types::Role::User,
            content: types::Content::Text("hi".into()),
        }],
        system_prompt: None,
        max_tokens: 10,
        temperature: None,
        stop_sequences: Vec::new(),
        model_preferences: preferences,
        tools,
    })
}

fn check_requests(text: &str, grant: &InteractionGrant) {
    let flat = r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#;
    let requests: Vec<types::KeyedRequest> = text
        .lines()
        .take(interaction::MAX_REQUESTS)
        .enumerate()
        .filter_map(|(index, line)| {
            let mut chars = line.chars();
            let tag = chars.next()?;
            let rest = chars.as_str().to_string();
            let request = match tag {
                'f' => types::InputRequest::ElicitForm(types::ElicitForm {
                    message: "m".into(),
                    requested_schema: rest,
                }),
                'm' => types::InputRequest::ElicitForm(types::ElicitForm {
                    message: rest,
                    requested_schema: flat.into(),
                }),
                'u' => types::InputRequest::ElicitUrl(types::ElicitUrl {
                    message: "m".into(),
                    url: rest,
                    elicitation_id: "e".into(),
                }),
                't' => sampling(Some(rest), None),
                'p' => sampling(None, Some(rest)),
                _ => return None,
            };
            Some(types::KeyedRequest {
                key: format!("k{index}"),
                request,
            })
        })
        .collect();
    if requests.is_empty() {
        return;
    }
    let sources: Vec<types::InputRequest> = requests.iter().map(|r| r.request.clone()).collect();
    let limits = RequestLimits {
        output: OUTPUT,
        grant,
        manifest: "fuzzed.toml",
    };
    let asked = types::InputRequired {
        requests,
        state: Vec::new(),
    };
    let Ok(round) = request::prepare(asked, &limits) else {
        return;
    };
    assert_eq!(round.requests.len(), sources.len());
    let mut let_through: u64 = 0;
    for (checked, source) in round.requests.iter().zip(&sources) {
        match &checked.prepared {
            Prepared::Ready(_) => {}
            Prepared::Refused { why, .. } => {
                assert!(!why.is_empty());
                continue;
            }
            Prepared::NotGranted => panic!("everything is granted"),
        }
        let_through += match source {
            types::InputRequest::ElicitForm(form) => {
                let schema: Value = serde_json::from_str(&form.requested_schema).expect("a passed schema is JSON");
                assert_eq!(form_schema::check(&schema), Ok(()), "{schema}");
                (form.message.len() + form.requested_schema.len()) as u64
            }
            types::InputRequest::ElicitUrl(url) => {
                assert_eq!(grant.check_url(&url.url), Ok(()));
                // Schemes are case-insensitive (RFC 3986 §3.1): `Https://` is https.
                let lower = url.url.get(..8).unwrap_or(&url.url).to_ascii_lowercase();
                assert!(
                    lower.starts_with("https://") || lower.starts_with("http://"),
                    "{}",
                    url.url
                );
                (url.message.len() + url.url.len() + url.elicitation_id.len()) as u64
            }
            types::InputRequest::Sample(sample) => {
                for json in [&sample.tools, &sample.model_preferences].into_iter().flatten() {
                    assert!(serde_json::from_str::<Value>(json).is_ok(), "{json}");
                }
                (2 + sample.tools.as_ref().map_or(0, String::len)
                    + sample.model_preferences.as_ref().map_or(0, String::len)) as u64
            }
            types::InputRequest::ListRoots => 0,
        };
    }
    assert!(let_through <= OUTPUT, "{let_through} bytes let through");
}

fn check_answers(text: &str, grant: &InteractionGrant) {
    let Ok(responses) = serde_json::from_str::<rmcp::model::InputResponses>(text) else {
        return;
    };
    let codec = interaction::codec_with_key(vec![7; 32]).unwrap();
    let binding = Binding::new("oauth-sub:fuzz", "sha", "tools/call", "t", [b"{}".as_slice()]);
    let asked: BTreeMap<String, InputKind> = [
        ("form", InputKind::Elicit),
        ("login", InputKind::ElicitUrl),
        ("model", InputKind::Sample),
        ("roots", InputKind::Roots),
    ]
    .into_iter()
    .map(|(key, kind)| (key.to_string(), kind))
    .collect();
    let refused: BTreeMap<String, String> = [("denied".to_string(), "not granted".to_string())].into();
    let sealed = interaction::seal(&codec, &binding, 1, b"s", asked.clone(), refused).unwrap();
    let used = UsedStates::default();
    let resumption = Resumption {
        codec: &codec,
        binding: &binding,
        grant,
        used: &used,
        stateless: true,
    };
    // Without a state, the answers count only for what a first round asks.
    match answers::answered_ahead(&responses, &asked, grant) {
        Ok(Some(early)) => {
            let keys: Vec<&str> = early.iter().map(|a| a.key.as_str()).collect();
            let expected: Vec<&str> = asked.keys().map(String::as_str).collect();
            assert_eq!(keys, expected, "answers ahead for exactly what was asked");
        }
        Ok(None) => assert!(asked.keys().any(|key| !responses.contains_key(key))),
        Err(error) => assert_eq!(error.code.0, -32602, "{}", error.message),
    }
    let retry = || Retry {
        responses: Some(&responses),
        state: Some(&sealed),
    };
    match answers::resume(&resumption, retry()) {
        Err(error) => {
            assert_eq!(error.code.0, -32602, "{}", error.message);
            assert!(used.is_empty(), "a refused retry used the state up");
        }
        Ok((round, input)) => {
            assert_eq!(round, 2);
            let input = input.expect("answers");
            assert_eq!(input.state, b"s");
            for key in responses.keys() {
                assert!(asked.contains_key(key), "an answer for `{key}`, which was not asked");
            }
            for answer in &input.answers {
                let kind = match answer.key.as_str() {
                    "denied" => {
                        assert!(matches!(answer.answer, types::InputAnswer::Refused(_)));
                        continue;
                    }
                    key => asked[key],
                };
                let matches = match (&answer.answer, kind) {
                    (types::InputAnswer::Elicit(elicit), InputKind::ElicitUrl) => elicit.content.is_none(),
                    (types::InputAnswer::Elicit(_), InputKind::Elicit) => true,
                    (types::InputAnswer::Sample(_), InputKind::Sample) => true,
                    (types::InputAnswer::Roots(_), InputKind::Roots) => true,
                    _ => false,
                };
                assert!(matches, "`{}` answered with another kind than asked", answer.key);
            }
            let again = answers::resume(&resumption, retry()).expect_err("a replay is refused");
            assert!(again.message.contains("used already"), "{}", again.message);
        }
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    /// The committed seeds pass the check (what `fuzz/run.sh` starts from).
    #[test]
    fn the_seeds_pass() {
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/interaction");
        let mut checked = 0;
        for seed in std::fs::read_dir(seeds).unwrap() {
            super::check(&std::fs::read(seed.unwrap().path()).unwrap());
            checked += 1;
        }
        assert!(checked >= 4, "{checked} seeds");
    }
}
