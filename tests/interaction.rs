//! Interactive plugins (warden:plugin@0.2.0) on the 2026-07-28 wire, raw over HTTP as a
//! client sends them: an input-required result, the retry with `inputResponses` and the
//! sealed `requestState`, and every way a `requestState` can be bad — forged, altered,
//! issued for other arguments or by a server with another key — refused before any plugin
//! runs. The fixtures plugin `conformance-interactive` asks; its manifest decides what it
//! may ask.

mod support;

use serde_json::{Value, json};
use support::PluginDir;
use support::http::HttpWarden;

/// Everything the fixtures may ask.
const GRANTED: &str = "[interaction]\nelicit = true\nsample = true\nroots = true\n";

/// A client that declares elicitation, sampling and roots.
fn capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// Posts one 2026-07-28 request; the HTTP status and the JSON-RPC message.
async fn post(warden: &HttpWarden, method: &str, mut params: Value, capabilities: Value) -> (u16, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let mut request = reqwest::Client::new()
        .post(&warden.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        request = request.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let response = request.body(body).send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let message = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 1)
        .unwrap_or_else(|| panic!("no answer in {text}"));
    (status, message)
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

    // An answer that is not a result of any kind: refused before the plugin runs.
    let retry = call(json!({"inputResponses": {"user_name": 12345}}));
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
