//! The interaction unit tests: sealing, resuming and refusing rounds.

use super::*;
use serde_json::json;

fn codec() -> RequestStateCodec {
    RequestStateCodec::try_new(vec![7u8; 32]).unwrap()
}

fn granted_all() -> InteractionGrant {
    InteractionGrant {
        elicit: true,
        sample: true,
        roots: true,
        ..InteractionGrant::default()
    }
}

fn seal(codec: &RequestStateCodec, binding: &Binding, asked: &[(&str, InputKind)], ttl: Duration) -> String {
    let carried = Carried {
        round: 1,
        state: base64(b"mine"),
        asked: asked.iter().map(|(key, kind)| (key.to_string(), *kind)).collect(),
        refused: [("roots".to_string(), "not granted".to_string())].into(),
    };
    codec
        .seal_json_with(&carried, &SealOptions::new().associated_data(&binding.bytes).ttl(ttl))
        .unwrap()
}

fn resumption<'a>(
    codec: &'a RequestStateCodec,
    binding: &'a Binding,
    grant: &'a InteractionGrant,
    used: &'a UsedStates,
) -> answers::Resumption<'a> {
    answers::Resumption {
        codec,
        binding,
        grant,
        used,
        stateless: true,
    }
}

fn retry<'a>(responses: &'a InputResponses, state: &'a str) -> Retry<'a> {
    Retry {
        responses: Some(responses),
        state: Some(state),
    }
}

fn error_of(result: Result<(u32, Option<types::InputAnswers>), McpError>) -> McpError {
    match result {
        Ok(_) => panic!("accepted"),
        Err(error) => error,
    }
}

#[test]
fn a_binding_tells_apart_prompt_arguments_that_run_together() {
    let prompt =
        |parts: &[&str]| Binding::new("", "sha", "prompts/get", "p", parts.iter().map(|part| part.as_bytes())).bytes;
    assert_ne!(prompt(&["a", "bc"]), prompt(&["ab", "c"]));
    assert_ne!(prompt(&["a", ""]), prompt(&[]));
    assert_eq!(prompt(&["a", "bc"]), prompt(&["a", "bc"]));
}

#[test]
fn a_retry_opens_only_state_issued_for_the_same_caller_and_request_once() {
    let (codec, grant) = (codec(), granted_all());
    let binding = Binding::new("oauth-sub:alice", "sha", "tools/call", "greet", [b"{}".as_slice()]);
    let sealed = seal(&codec, &binding, &[("name", InputKind::Elicit)], STATE_TTL);
    let responses: InputResponses = [(
        "name".to_string(),
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )]
    .into();

    // Another caller, other arguments, another tool, other code, a tampered or
    // foreign state: refused — and none of them uses the state up.
    for other in [
        Binding::new("oauth-sub:mallory", "sha", "tools/call", "greet", [b"{}".as_slice()]),
        Binding::new("", "sha", "tools/call", "greet", [b"{}".as_slice()]),
        Binding::new(
            "oauth-sub:alice",
            "sha",
            "tools/call",
            "greet",
            [b"{\"x\":1}".as_slice()],
        ),
        Binding::new("oauth-sub:alice", "sha", "tools/call", "other", [b"{}".as_slice()]),
        Binding::new(
            "oauth-sub:alice",
            "other-code",
            "tools/call",
            "greet",
            [b"{}".as_slice()],
        ),
    ] {
        let used = UsedStates::default();
        let error = error_of(answers::resume(
            &resumption(&codec, &other, &grant, &used),
            retry(&responses, &sealed),
        ));
        assert_eq!(error.code.0, -32602);
        assert!(
            error.message.contains("not one this server issued for this caller"),
            "{}",
            error.message
        );
    }
    let used = UsedStates::default();
    let tampered = format!("{sealed}-TAMPERED");
    assert!(
        answers::resume(
            &resumption(&codec, &binding, &grant, &used),
            retry(&responses, &tampered)
        )
        .is_err()
    );
    let foreign = RequestStateCodec::try_new(vec![9u8; 32]).unwrap();
    assert!(
        answers::resume(
            &resumption(&foreign, &binding, &grant, &used),
            retry(&responses, &sealed)
        )
        .is_err()
    );
    assert!(used.is_empty(), "a refused retry does not use the state up");

    let (round, input) =
        answers::resume(&resumption(&codec, &binding, &grant, &used), retry(&responses, &sealed)).unwrap();
    assert_eq!(round, 2);
    let input = input.unwrap();
    assert_eq!(input.state, b"mine");
    let keys: Vec<&str> = input.answers.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["roots", "name"]);

    // The same state again: refused, on this process.
    let error = error_of(answers::resume(
        &resumption(&codec, &binding, &grant, &used),
        retry(&responses, &sealed),
    ));
    assert_eq!(error.code.0, -32602);
    assert!(error.message.contains("has been used already"), "{}", error.message);
}

#[test]
fn answers_must_be_for_the_keys_and_kinds_asked_and_granted() {
    let codec = codec();
    let binding = Binding::new("", "sha", "tools/call", "greet", [b"{}".as_slice()]);
    let sealed = seal(
        &codec,
        &binding,
        &[("name", InputKind::Elicit), ("login", InputKind::ElicitUrl)],
        STATE_TTL,
    );
    let grant = granted_all();
    let used = UsedStates::default();
    for (responses, why) in [
        (
            json!({"extra": {"action": "accept"}}),
            "inputResponses.extra: this round did not ask for `extra`",
        ),
        (
            json!({"name": {"role": "assistant", "content": {"type": "text", "text": "hi"}}}),
            "inputResponses.name: `action` must be",
        ),
        (json!({"name": {"roots": []}}), "inputResponses.name: `action` must be"),
        (
            json!({"login": {"action": "accept", "content": {"token": "x"}}}),
            "a URL elicitation's result has no `content`",
        ),
        (json!({"name": 12345}), "inputResponses.name: not a JSON object"),
    ] {
        let responses: InputResponses = serde_json::from_value(responses).unwrap();
        let error = error_of(answers::resume(
            &resumption(&codec, &binding, &grant, &used),
            retry(&responses, &sealed),
        ));
        assert_eq!(error.code.0, -32602, "{why}");
        assert!(error.message.contains(why), "{why}: {}", error.message);
    }
    // The operator withdrew the grant between the rounds.
    let withdrawn = InteractionGrant::default();
    let responses: InputResponses = serde_json::from_value(json!({"name": {"action": "decline"}})).unwrap();
    let error = error_of(answers::resume(
        &resumption(&codec, &binding, &withdrawn, &used),
        retry(&responses, &sealed),
    ));
    assert!(
        error.message.contains("no longer grants elicitation"),
        "{}",
        error.message
    );
    assert!(used.is_empty());
    // What was asked, answered as asked: accepted.
    let responses: InputResponses = serde_json::from_value(
        json!({"name": {"action": "accept", "content": {"n": 1}}, "login": {"action": "accept"}}),
    )
    .unwrap();
    assert!(answers::resume(&resumption(&codec, &binding, &grant, &used), retry(&responses, &sealed)).is_ok());
}

#[test]
fn answers_without_a_state_are_never_delivered() {
    let (codec, grant, used) = (codec(), InteractionGrant::default(), UsedStates::default());
    let binding = Binding::new("", "sha", "tools/call", "delete_note", [b"{}".as_slice()]);
    let responses: InputResponses =
        serde_json::from_value(json!({"confirm": {"action": "accept", "content": {"confirm": true}}})).unwrap();
    let without_state = || Retry {
        responses: Some(&responses),
        state: None,
    };
    // 2026-07-28: the call starts over at round 1 with no answers; they count only
    // as answers ahead to what that round asks, of the kind it asks.
    let (round, input) = answers::resume(&resumption(&codec, &binding, &grant, &used), without_state()).unwrap();
    assert_eq!((round, input.is_none()), (1, true));
    let granted = granted_all();
    let asked: BTreeMap<String, InputKind> = [("confirm".to_string(), InputKind::Elicit)].into();
    let early = answers::answered_ahead(&responses, &asked, &granted).unwrap().unwrap();
    assert_eq!(early.len(), 1);
    assert!(matches!(early[0].answer, types::InputAnswer::Elicit(_)));
    let other: BTreeMap<String, InputKind> = [("name".to_string(), InputKind::Elicit)].into();
    assert!(
        answers::answered_ahead(&responses, &other, &granted).unwrap().is_none(),
        "unanswered: ask"
    );
    let sampled: BTreeMap<String, InputKind> = [("confirm".to_string(), InputKind::Sample)].into();
    let error = answers::answered_ahead(&responses, &sampled, &granted).unwrap_err();
    assert!(
        error.message.contains("inputResponses.confirm: `role` must be"),
        "{}",
        error.message
    );
    // 2025-11-25: not part of the protocol at all; refused.
    let session = answers::Resumption {
        stateless: false,
        ..resumption(&codec, &binding, &grant, &used)
    };
    let error = error_of(answers::resume(&session, without_state()));
    assert_eq!(error.code.0, -32602);
    assert!(
        error.message.contains("belong to the 2026-07-28 protocol"),
        "{}",
        error.message
    );
    let (round, input) = answers::resume(
        &session,
        Retry {
            responses: None,
            state: None,
        },
    )
    .unwrap();
    assert_eq!((round, input.is_none()), (1, true));
}

#[test]
fn an_expired_state_is_refused() {
    let (codec, grant, used) = (codec(), granted_all(), UsedStates::default());
    let binding = Binding::new("", "sha", "tools/call", "greet", [b"{}".as_slice()]);
    let sealed = seal(&codec, &binding, &[], Duration::from_millis(1));
    // The expiry has millisecond resolution: wait (without sleeping) until it is past.
    let sealed_at = std::time::Instant::now();
    while sealed_at.elapsed() < Duration::from_millis(5) {
        std::hint::spin_loop();
    }
    let retry = Retry {
        responses: None,
        state: Some(&sealed),
    };
    let error = error_of(answers::resume(&resumption(&codec, &binding, &grant, &used), retry));
    assert!(error.message.contains("request state has expired"), "{}", error.message);
}

fn form(key: &str, message: String, schema: String) -> types::KeyedRequest {
    types::KeyedRequest {
        key: key.into(),
        request: types::InputRequest::ElicitForm(types::ElicitForm {
            message,
            requested_schema: schema,
        }),
    }
}

fn url(key: &str, url: &str) -> types::KeyedRequest {
    types::KeyedRequest {
        key: key.into(),
        request: types::InputRequest::ElicitUrl(types::ElicitUrl {
            message: "Sign in".into(),
            url: url.into(),
            elicitation_id: "e1".into(),
        }),
    }
}

fn refusal(round: &Round, key: &str) -> (String, Option<String>) {
    match &round.requests.iter().find(|r| r.key == key).unwrap().prepared {
        Prepared::Refused { why, denied } => (why.clone(), denied.clone()),
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn requests_are_refused_to_the_plugin_past_the_limits_before_they_are_parsed() {
    let grant = InteractionGrant {
        url_allow: vec![warden_runtime::grants::HttpRule::parse("login.example.com").unwrap()],
        ..granted_all()
    };
    let limits = RequestLimits {
        output: 1 << 20,
        grant: &grant,
        manifest: "hostile.toml",
    };
    let flat = r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#.to_string();
    let nested = r#"{"type":"object","properties":{"a":{"type":"object","properties":{}}}}"#.to_string();
    // 40 MB of schema: refused by its size alone (it is not valid JSON either,
    // which would only show if it were parsed).
    let huge_schema = format!("[{}", "0,".repeat(20 << 20));
    let asked = types::InputRequired {
        requests: vec![
            form("flat", "Sure?".into(), flat.clone()),
            form("nested", "Sure?".into(), nested),
            form("huge_message", "x".repeat(2 << 20), flat.clone()),
            form("huge_schema", "Sure?".into(), huge_schema),
            url("login", "https://login.example.com/start"),
            url("script", "javascript:alert(1)"),
            url("metadata", "http://169.254.169.254/latest/meta-data/"),
            url("elsewhere", "https://evil.example/phish"),
        ],
        state: Vec::new(),
    };
    let round = request::prepare(asked, &limits).unwrap();
    assert!(matches!(round.requests[0].prepared, Prepared::Ready(_)));
    assert!(matches!(round.requests[4].prepared, Prepared::Ready(_)));
    let (why, _) = refusal(&round, "nested");
    assert!(
        why.contains("`properties.a`: `type` \"object\" is not allowed"),
        "{why}"
    );
    let (why, _) = refusal(&round, "huge_message");
    assert!(
        why.contains("more than the plugin's 1 MiB `[limits] output` (hostile.toml)"),
        "{why}"
    );
    let (why, _) = refusal(&round, "huge_schema");
    assert!(why.contains("more than the plugin's 1 MiB `[limits] output`"), "{why}");
    let (why, denied) = refusal(&round, "script");
    assert!(why.contains("not `javascript`"), "{why}");
    assert_eq!(denied.as_deref(), Some("interaction.url-allow (javascript:)"));
    let (why, denied) = refusal(&round, "metadata");
    assert!(
        why.contains("http only to loopback; `169.254.169.254` needs https"),
        "{why}"
    );
    assert_eq!(
        denied.as_deref(),
        Some("interaction.url-allow (http://169.254.169.254)")
    );
    let (why, denied) = refusal(&round, "elsewhere");
    assert!(why.contains("to [interaction] url-allow in hostile.toml"), "{why}");
    assert_eq!(denied.as_deref(), Some("interaction.url-allow (evil.example:443)"));

    // With room in the budget, a schema over the schema size bound is still refused.
    let roomy = RequestLimits {
        output: 64 << 20,
        ..limits
    };
    let big_schema = format!(
        r#"{{"type":"object","properties":{{"a":{{"type":"string","description":"{}"}}}}}}"#,
        "x".repeat(300 << 10)
    );
    let round = request::prepare(
        types::InputRequired {
            requests: vec![form("big", "?".into(), big_schema)],
            state: Vec::new(),
        },
        &roomy,
    )
    .unwrap();
    let (why, _) = refusal(&round, "big");
    assert!(why.contains("its requested schema is 307"), "{why}");
    assert!(why.contains("more than the 256 KiB a schema may have"), "{why}");

    // Not granted: not looked at, whatever it holds.
    let none = InteractionGrant::default();
    let round = request::prepare(
        types::InputRequired {
            requests: vec![form("q", "x".repeat(4 << 20), flat)],
            state: Vec::new(),
        },
        &RequestLimits { grant: &none, ..roomy },
    )
    .unwrap();
    assert!(matches!(round.requests[0].prepared, Prepared::NotGranted));
}

#[test]
fn a_malformed_round_fails_as_a_whole() {
    let grant = granted_all();
    let limits = RequestLimits {
        output: 1 << 20,
        grant: &grant,
        manifest: "x.toml",
    };
    let twice = types::InputRequired {
        requests: vec![url("k", "https://a.example/"), url("k", "https://a.example/")],
        state: Vec::new(),
    };
    assert!(
        request::prepare(twice, &limits)
            .unwrap_err()
            .contains("one request key twice")
    );
    let stateful = types::InputRequired {
        requests: vec![url("k", "https://a.example/")],
        state: vec![0; MAX_PLUGIN_STATE + 1],
    };
    assert!(request::prepare(stateful, &limits).unwrap_err().contains("state is"));
}
