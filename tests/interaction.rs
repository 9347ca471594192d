//! Interactive plugins (warden:plugin@0.2.0) on the 2026-07-28 wire, raw over HTTP as a
//! client sends them: an input-required result, the retry with `inputResponses` and the
//! sealed `requestState`, and every way a `requestState` can be bad — forged, altered,
//! issued for other arguments or by a server with another key, used once already, answering
//! what was not asked — refused before any plugin runs. The fixtures plugin
//! `conformance-interactive` asks; its manifest decides what it may ask. The hostile plugin
//! `interaction-hostile` asks with payloads past every limit, and the example `notes` is
//! sent answers nobody asked for.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use serde_json::{Value, json};
use support::http::HttpWarden;
use support::{PluginDir, attacks, status_kib};

/// Everything the fixtures may ask.
const GRANTED: &str = "[interaction]\nelicit = true\nsample = true\nroots = true\n";

/// A client that declares elicitation, sampling and roots.
fn capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// Posts one 2026-07-28 request (no token); the HTTP status and the JSON-RPC message.
async fn post(warden: &HttpWarden, method: &str, params: Value, capabilities: Value) -> (u16, Value) {
    warden.post_2026(None, method, params, capabilities).await
}

fn served(manifest: Option<&str>) -> PluginDir {
    let dir = PluginDir::with(&["conformance-interactive"]);
    if let Some(manifest) = manifest {
        dir.write("conformance-interactive.toml", manifest);
    }
    dir
}

fn text(message: &Value) -> &str {
    message["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn an_elicitation_round_trips_through_the_client_and_its_state_cannot_be_forged() {
    let dir = served(Some(GRANTED));
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let call = |extra: Value| {
        let mut params = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
        for (key, value) in extra.as_object().unwrap() {
            params[key] = value.clone();
        }
        params
    };

    // Round 1: the plugin asks for `user_name`; the state is sealed.
    let (status, first) = post(&warden, "tools/call", call(json!({})), capabilities()).await;
    assert_eq!(status, 200, "{first}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"], "elicitation/create",
        "{first}"
    );
    let state = result["requestState"].as_str().unwrap().to_string();
    let answer = json!({"user_name": {"action": "accept", "content": {"name": "Alice"}}});

    // Round 2: the answer and the state: the plugin completes.
    let retry = call(json!({"inputResponses": answer, "requestState": state}));
    let (status, done) = post(&warden, "tools/call", retry, capabilities()).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(text(&done), "Hello, Alice!", "{done}");

    // Altered, forged, or issued for other arguments: refused (-32602), no plugin runs.
    let tampered = format!("{state}-TAMPERED");
    let forged = "rs1.eyJyb3VuZCI6MX0.AAAA".to_string();
    for bad in [tampered, forged] {
        let retry = call(json!({"inputResponses": answer, "requestState": bad}));
        let (_, refused) = post(&warden, "tools/call", retry, capabilities()).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState is not one this server issued"),
            "{refused}"
        );
    }
    // A state issued for one call's arguments does not continue a call with others.
    let sampling = |prompt: &str| json!({"name": "test_sampling", "arguments": {"prompt": prompt}});
    let (_, asked) = post(&warden, "tools/call", sampling("one"), capabilities()).await;
    let key = asked["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = sampling("two");
    retry["inputResponses"] =
        json!({ key: {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"} });
    retry["requestState"] = asked["result"]["requestState"].clone();
    let (_, refused) = post(&warden, "tools/call", retry.clone(), capabilities()).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    retry["arguments"]["prompt"] = json!("one");
    let (_, done) = post(&warden, "tools/call", retry, capabilities()).await;
    assert_eq!(text(&done), "LLM response: hi", "{done}");

    // Another server (another key) cannot continue this server's call.
    let other = HttpWarden::start(dir.path(), &[]).await;
    let retry = call(json!({"inputResponses": answer, "requestState": state}));
    let (_, refused) = post(&other, "tools/call", retry, capabilities()).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // Answers without a state: the call starts over, and they count only as answers given
    // ahead to what its first round asks. A wrong key answers nothing: the plugin asks
    // again (SEP-2322 prefers that to an error).
    let retry = call(json!({"inputResponses": {"wrong_key": {"action": "accept", "content": {"name": "Eve"}}}}));
    let (_, again) = post(&warden, "tools/call", retry, capabilities()).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    // The key the first round asks, of the kind it asks: used; keys it did not ask: ignored.
    let eve = json!({"action": "accept", "content": {"name": "Eve"}});
    let retry = call(json!({"inputResponses": {"user_name": eve, "delete_all": {"action": "accept"}}}));
    let (_, ahead) = post(&warden, "tools/call", retry, capabilities()).await;
    assert_eq!(text(&ahead), "Hello, Eve!", "{ahead}");
    // The asked key answered with another kind: refused.
    let retry = call(json!({"inputResponses": {"user_name": {"roots": []}}}));
    let (_, refused) = post(&warden, "tools/call", retry, capabilities()).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn replicas_sharing_a_key_continue_each_others_calls() {
    let dir = served(Some(GRANTED));
    let key = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(key.path(), "0123456789abcdef0123456789abcdef-shared-key").unwrap();
    let key = key.path().to_str().unwrap();
    let first = HttpWarden::start(dir.path(), &["--state-key-file", key]).await;
    let second = HttpWarden::start(dir.path(), &["--state-key-file", key]).await;
    let params = json!({"name": "test_input_required_result_multi_round", "arguments": {}});
    let (_, round1) = post(&first, "tools/call", params.clone(), capabilities()).await;
    let state1 = round1["result"]["requestState"].as_str().unwrap().to_string();
    let key1 = round1["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = params.clone();
    retry["inputResponses"] = json!({ key1: {"action": "accept", "content": {"name": "Alice"}} });
    retry["requestState"] = json!(state1);
    let (_, round2) = post(&second, "tools/call", retry, capabilities()).await;
    assert_eq!(round2["result"]["resultType"], "input_required", "{round2}");
    let state2 = round2["result"]["requestState"].as_str().unwrap().to_string();
    assert_ne!(state1, state2);
    let key2 = round2["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut retry = params.clone();
    retry["inputResponses"] = json!({ key2: {"action": "accept", "content": {"color": "blue"}} });
    retry["requestState"] = json!(state2);
    let (_, done) = post(&first, "tools/call", retry, capabilities()).await;
    assert_eq!(text(&done), "Alice's favorite color is blue.", "{done}");
}

#[tokio::test]
async fn what_the_operator_did_not_grant_or_the_client_cannot_do_is_never_asked() {
    // No [interaction]: the plugin hears `refused` and says so; the client is asked nothing,
    // and the audit record lists the denial.
    let dir = served(None);
    let audit = tempfile::NamedTempFile::new().unwrap();
    let audit_path = audit.path().to_str().unwrap();
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit_path]).await;
    let params = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let (status, answer) = post(&warden, "tools/call", params, capabilities()).await;
    assert_eq!(status, 200, "{answer}");
    assert_ne!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let records: Vec<Value> = std::fs::read_to_string(audit.path())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let record = records.last().expect("the call is audited");
    assert_eq!(
        record["denied"],
        json!(["interaction.elicitation (request `user_name`)"]),
        "{record}"
    );
    // An answer sent ahead for what the operator did not grant is never delivered.
    let mut ahead = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    ahead["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Eve"}}});
    let (_, answer) = post(&warden, "tools/call", ahead, capabilities()).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(!text(&answer).contains("Eve"), "{answer}");

    // Granted, but the client lacks sampling and nothing else can be asked: -32021, HTTP 400.
    let dir = served(Some(GRANTED));
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let params = json!({"name": "test_missing_capability", "arguments": {}});
    let (status, refused) = post(&warden, "tools/call", params, json!({})).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{refused}"
    );

    // A client with sampling only is asked for sampling only.
    let params = json!({"name": "test_input_required_result_capabilities", "arguments": {}});
    let (_, asked) = post(&warden, "tools/call", params, json!({"sampling": {}})).await;
    let requests = asked["result"]["inputRequests"].as_object().unwrap();
    assert!(!requests.is_empty(), "{asked}");
    assert!(
        requests.values().all(|r| r["method"] == "sampling/createMessage"),
        "{asked}"
    );
}

#[tokio::test]
async fn a_plugin_that_keeps_asking_is_stopped_at_max_rounds() {
    // The fixture asks again for `user_name` while it has no answer: a client that
    // never gives one keeps the call asking, until the manifest's max-rounds (here 3).
    let dir = served(Some("[interaction]\nelicit = true\nmax-rounds = 3\n"));
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let mut params = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let mut rounds = 0;
    let last = loop {
        let (_, answer) = post(&warden, "tools/call", params.clone(), capabilities()).await;
        if answer["result"]["resultType"] != "input_required" {
            break answer;
        }
        rounds += 1;
        assert!(rounds <= 3, "still asking after {rounds} rounds: {answer}");
        params["inputResponses"] = json!({});
        params["requestState"] = answer["result"]["requestState"].clone();
    };
    assert_eq!(rounds, 3, "{last}");
    assert_eq!(last["result"]["isError"], true, "{last}");
    assert!(text(&last).contains("asked for input more than 3 times"), "{last}");
}

#[tokio::test]
async fn a_state_is_accepted_once_and_only_for_what_its_round_asked() {
    let dir = served(Some(GRANTED));
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let call = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let (_, first) = post(&warden, "tools/call", call.clone(), capabilities()).await;
    let state = first["result"]["requestState"].clone();
    let retry = |answers: Value| {
        let mut retry = call.clone();
        retry["inputResponses"] = answers;
        retry["requestState"] = state.clone();
        retry
    };
    let alice = json!({"action": "accept", "content": {"name": "Alice"}});

    // A key the round did not ask, and an answer of another kind: -32602, nothing runs,
    // and the state is not used up by a refused retry.
    for (answers, why) in [
        (
            json!({"user_name": alice, "delete_everything": {"action": "accept"}}),
            "inputResponses.delete_everything: this round did not ask for `delete_everything`",
        ),
        (
            json!({"user_name": {"role": "assistant", "content": {"type": "text", "text": "Mallory"}}}),
            "inputResponses.user_name: `action` must be",
        ),
        (
            json!({"user_name": {"roots": []}}),
            "inputResponses.user_name: `action` must be",
        ),
    ] {
        let (_, refused) = post(&warden, "tools/call", retry(answers), capabilities()).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{refused}");
    }

    // Answered as asked: the call completes, once.
    let (_, done) = post(
        &warden,
        "tools/call",
        retry(json!({"user_name": alice})),
        capabilities(),
    )
    .await;
    assert_eq!(text(&done), "Hello, Alice!", "{done}");
    let bob = json!({"user_name": {"action": "accept", "content": {"name": "Bob"}}});
    let (_, replayed) = post(&warden, "tools/call", retry(bob), capabilities()).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState has been used already"),
        "{replayed}"
    );
}

/// A 2025-11-25 session over HTTP, opened by hand: its id.
async fn open_2025_session(warden: &HttpWarden) -> String {
    let client = reqwest::Client::new();
    let send = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(&warden.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let response = send(initialize, None).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let _ = response.text().await.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let _ = send(initialized, Some(&session)).await.unwrap().text().await.unwrap();
    session
}

/// One request in a 2025-11-25 session: the JSON-RPC answer.
async fn post_2025(warden: &HttpWarden, session: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let text = reqwest::Client::new()
        .post(&warden.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 1)
        .unwrap_or_else(|| panic!("no answer in {text}"))
}

#[tokio::test]
async fn made_up_answers_never_reach_the_notes_plugin_on_either_wire() {
    // The example `notes`: a writable mount, no `[interaction]` grant. A client that
    // sends a confirmation nobody asked for must not get a note deleted.
    let notes = tempfile::tempdir().unwrap();
    let note = notes.path().join("groceries.md");
    std::fs::write(&note, "milk\n").unwrap();
    let dir = PluginDir::with(&["notes"]);
    dir.write(
        "notes.toml",
        format!(
            "[filesystem]\n\"{}\" = {{ mount = \"/notes\", access = \"read-write\" }}\n",
            notes.path().display()
        ),
    );
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let confirmed = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});

    // 2026-07-28, no requestState: the answers are dropped; the plugin, which may not ask,
    // refuses to delete.
    let params = json!({"name": "delete_note", "arguments": {"name": "groceries"}, "inputResponses": confirmed});
    let (status, answer) = post(&warden, "tools/call", params, capabilities()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(text(&answer).contains("did not delete the note"), "{answer}");
    assert!(note.exists(), "the note was deleted on the 2026-07-28 wire: {answer}");

    // 2025-11-25, where `inputResponses` is not part of the protocol: refused.
    let session = open_2025_session(&warden).await;
    let params = json!({"name": "delete_note", "arguments": {"name": "groceries"}, "inputResponses": confirmed});
    let answer = post_2025(&warden, &session, "tools/call", params).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("belong to the 2026-07-28 protocol"),
        "{answer}"
    );
    assert!(note.exists(), "the note was deleted on the 2025-11-25 wire: {answer}");
    // The session still works: the note is listed.
    let listed = post_2025(
        &warden,
        &session,
        "tools/call",
        json!({"name": "list_notes", "arguments": {}}),
    )
    .await;
    assert!(
        listed["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("groceries"),
        "{listed}"
    );
}

/// A client that declares both elicitation modes, and sampling with tools.
fn everything() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}}, "roots": {}})
}

/// The hostile plugin's manifest: it may ask everything, and send the user to one host.
const HOSTILE: &str = "[limits]\nmemory = \"256 MiB\"\n[interaction]\nelicit = true\nsample = true\n\
                       url-allow = [\"login.example.com\"]\n";

#[tokio::test]
async fn hostile_requests_are_refused_to_the_plugin_and_never_reach_the_client() {
    let dir = PluginDir::with(&["interaction-hostile", "misbehave"]);
    dir.write("interaction-hostile.toml", HOSTILE);
    let audit = tempfile::NamedTempFile::new().unwrap();
    let audit_path = audit.path().to_str().unwrap();
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit_path]).await;
    let pid = warden.pid();
    let ask = |arguments: Value| json!({"name": "ask", "arguments": arguments});
    let healthy = async || {
        let (_, echoed) = post(
            &warden,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
            everything(),
        )
        .await;
        assert_eq!(text(&echoed), "still here", "{echoed}");
    };
    healthy().await;

    // What the host must let through does reach the client.
    let (_, flat) = post(&warden, "tools/call", ask(json!({"attack": "flat"})), everything()).await;
    assert_eq!(flat["result"]["resultType"], "input_required", "{flat}");
    let (_, allowed) = post(
        &warden,
        "tools/call",
        ask(json!({"attack": "url", "url": "https://login.example.com/authorize?client=1"})),
        everything(),
    )
    .await;
    assert_eq!(
        allowed["result"]["inputRequests"]["question"]["params"]["url"], "https://login.example.com/authorize?client=1",
        "{allowed}"
    );

    let before = status_kib(pid, "VmRSS");
    const SIZE: u64 = 32 << 20;
    let refusals = [
        (
            json!({"attack": "huge_schema", "size": SIZE}),
            "more than the plugin's 1 MiB `[limits] output`",
        ),
        (
            json!({"attack": "huge_message", "size": SIZE}),
            "more than the plugin's 1 MiB `[limits] output`",
        ),
        (
            json!({"attack": "huge_tools", "size": SIZE}),
            "more than the plugin's 1 MiB `[limits] output`",
        ),
        (
            json!({"attack": "huge_schema", "size": 300 << 10}),
            "its requested schema is 307",
        ),
        (json!({"attack": "huge_tools", "size": 300 << 10}), "its tools is 307"),
        (
            json!({"attack": "nested"}),
            "is not an MCP form: `properties.address`: `type` \"object\" is not allowed",
        ),
        (
            json!({"attack": "url", "url": "javascript:alert(document.cookie)"}),
            "not `javascript`",
        ),
        (
            json!({"attack": "url", "url": "data:text/html,<script>alert(1)</script>"}),
            "not `data`",
        ),
        (json!({"attack": "url", "url": "file:///etc/passwd"}), "not `file`"),
        (
            json!({"attack": "url", "url": "http://169.254.169.254/latest/meta-data/"}),
            "http only to loopback; `169.254.169.254` needs https",
        ),
        (
            json!({"attack": "url", "url": "https://evil.example/login"}),
            "add \"evil.example\" (or \"evil.example:443\") to [interaction] url-allow in interaction-hostile.toml",
        ),
    ];
    for (arguments, why) in &refusals {
        let (status, answer) = post(&warden, "tools/call", ask(arguments.clone()), everything()).await;
        assert_eq!(status, 200, "{arguments}: {answer}");
        // Nothing was put to the client: the plugin heard why, and said so.
        assert_ne!(
            answer["result"]["resultType"], "input_required",
            "{arguments}: {answer}"
        );
        let said = text(&answer);
        assert!(said.starts_with("refused: "), "{arguments}: {answer}");
        assert!(said.contains(why), "{arguments}: {said}");
        healthy().await;
    }
    let grown = status_kib(pid, "VmRSS").saturating_sub(before);
    eprintln!("host RSS grew by {grown} KiB over {} hostile rounds", refusals.len());
    assert!(grown < 512 << 10, "the host grew by {grown} KiB");

    // The refused URLs are denials in the audit record, by scheme or host.
    let denied: Vec<Value> = attacks::audit_lines(audit.path())
        .into_iter()
        .filter(|record| record["tool"] == "ask")
        .flat_map(|record| record["denied"].as_array().cloned().unwrap_or_default())
        .collect();
    for entry in [
        "interaction.url-allow (javascript:)",
        "interaction.url-allow (data:)",
        "interaction.url-allow (file:)",
        "interaction.url-allow (http://169.254.169.254)",
        "interaction.url-allow (evil.example:443)",
    ] {
        assert!(denied.contains(&json!(entry)), "{entry} not in {denied:?}");
    }
}
