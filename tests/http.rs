//! The Streamable HTTP transport: the real binary on 127.0.0.1, rmcp's HTTP
//! client in both protocol eras, and raw requests for the edges.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use support::http::HttpWarden;
use support::raw::{first_message, initialize_body, meta_2026, raw_post};
use support::{ERAS, Era, PluginDir, Recorder, call};

const TOKEN: &str = "correct-horse-battery-staple";

#[tokio::test]
async fn lists_and_calls_in_both_eras_with_two_clients_at_once() {
    let dir = PluginDir::with(&["text", "misbehave"]);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    for era in ERAS {
        let (first, second) = tokio::join!(warden.client(era, None), warden.client(era, None));
        let (a, b) = tokio::join!(
            call(&first, "text_stats", json!({"text": "one two three"})),
            call(&second, "echo", json!({"text": "from the second client"}))
        );
        assert_eq!(a.structured_content.unwrap()["words"], 3, "{era:?}");
        assert_eq!(support::text(&b), "from the second client");
        let tools = first.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "text_stats") && tools.iter().any(|t| t.name == "echo"));
        first.cancel().await.unwrap();
        second.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn health_and_readiness() {
    let dir = PluginDir::with(&["text"]);
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let warden = HttpWarden::start(dir.path(), &["--token-file", token_file.to_str().unwrap()]).await;
    let base = warden.base();
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    let get_ready = |token: Option<&str>| {
        let mut request = reqwest::Client::new().get(format!("{base}/readyz"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };
    // Anyone learns that it is ready, and nothing about what it serves.
    assert_eq!(get_ready(None).await, json!({"ready": true}));
    assert_eq!(get_ready(Some("guess")).await, json!({"ready": true}));
    // The operator, with the token, learns more.
    assert_eq!(
        get_ready(Some(TOKEN)).await,
        json!({"ready": true, "plugins": 1, "tools": 3, "sessions": 0})
    );

    // Or everyone does, when the operator says so.
    let public = HttpWarden::start(dir.path(), &["--public-readyz"]).await;
    let ready: Value = reqwest::get(format!("{}/readyz", public.base()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready, json!({"ready": true, "plugins": 1, "tools": 3, "sessions": 0}));
}

#[tokio::test]
async fn tokens_are_required_and_never_logged() {
    let dir = PluginDir::with(&["text"]);
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let warden = HttpWarden::start(dir.path(), &["--token-file", token_file.to_str().unwrap(), "-vv"]).await;

    let missing = raw_post(&warden.url).body(initialize_body()).send().await.unwrap();
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer realm=\"warden\"");
    let wrong = raw_post(&warden.url)
        .bearer_auth("guess")
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let almost = raw_post(&warden.url)
        .bearer_auth(&TOKEN[..TOKEN.len() - 1])
        .body(initialize_body())
        .send()
        .await;
    assert_eq!(almost.unwrap().status(), 401);

    for era in ERAS {
        let client = warden.client(era, Some(TOKEN)).await;
        let result = call(&client, "slugify", json!({"text": "Hello Token"})).await;
        assert_eq!(support::text(&result), "hello-token");
        client.cancel().await.unwrap();
    }
    assert!(!warden.log().contains(TOKEN), "the token must never reach the log");
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_forbidden_and_big_bodies_refused() {
    let dir = PluginDir::with(&["text"]);
    let warden = HttpWarden::start(dir.path(), &["--max-body", "64 KiB"]).await;
    let evil_origin = raw_post(&warden.url)
        .header("origin", "http://evil.example.com")
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(evil_origin.status(), 403);
    let evil_host = raw_post(&warden.url)
        .header("host", "evil.example.com")
        .header("origin", "http://evil.example.com")
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(evil_host.status(), 403);
    let local_origin = raw_post(&warden.url)
        .header("origin", "http://localhost:5173")
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    assert_eq!(local_origin.status(), 200);

    let huge = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "text_stats", "arguments": {"text": "x".repeat(100_000)}}});
    let too_big = raw_post(&warden.url).body(huge.to_string()).send().await.unwrap();
    assert_eq!(too_big.status(), 413);

    // Still serving.
    let client = warden.client(Era::Handshake, None).await;
    assert_eq!(
        support::text(&call(&client, "slugify", json!({"text": "A B"})).await),
        "a-b"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refuses_a_state_key_file_others_can_read_or_a_weak_key() {
    use std::os::unix::fs::PermissionsExt;
    let dir = PluginDir::with(&["text"]);
    let key = dir.path().join("state-key");
    let start = async |key: &std::path::Path| {
        let output = support::warden()
            .args(["serve", "--http", "127.0.0.1:0", "--state-key-file"])
            .arg(key)
            .arg("--plugins")
            .arg(dir.path())
            .output()
            .await
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    // 32 repeated letters, readable by everyone: the example.
    std::fs::write(&key, "a".repeat(32)).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let shown = key.display();
    let stderr = start(&key).await;
    assert!(
        stderr.contains(&format!(
            "the request-state key {shown} is readable by others (mode 644)"
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&format!("`chmod 600 {shown}`")), "{stderr}");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let stderr = start(&key).await;
    assert!(
        stderr.contains(&format!(
            "the request-state key {shown} has only 1 different bytes; a key needs at least 10"
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn refuses_a_public_address_without_authentication() {
    let dir = PluginDir::with(&["text"]);
    let output = support::warden()
        .args(["serve", "--http", "0.0.0.0:0", "--plugins"])
        .arg(dir.path())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{stderr}"
    );
}

/// CPU time (user + system) the process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[tokio::test]
async fn a_cancelled_call_stops_running_and_the_server_stays_healthy() {
    let dir = PluginDir::with(&["misbehave"]);
    let audit = dir.path().join("audit.jsonl");
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit.to_str().unwrap()]).await;
    for era in ERAS {
        let client = warden.client(era, None).await;
        let request = ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("spin")));
        let handle = client
            .peer()
            .send_request_with_option(request, PeerRequestOptions::default())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let busy = cpu_ticks(warden.pid());
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(cpu_ticks(warden.pid()) > busy, "the plugin is spinning");
        handle.cancel(Some("the user changed their mind".into())).await.unwrap();
        // The instance is dropped within the cancellation grace; then the CPU goes quiet.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let before = cpu_ticks(warden.pid());
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let used = cpu_ticks(warden.pid()) - before;
        assert!(
            used < 30,
            "{era:?}: still burning CPU after cancellation ({used} ticks in 1 s)"
        );
        let echoed = call(&client, "echo", json!({"text": "alive"})).await;
        assert_eq!(support::text(&echoed), "alive");
        client.cancel().await.unwrap();
    }
    let outcomes: Vec<String> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(outcomes, ["cancelled", "ok", "cancelled", "ok"]);
}

#[tokio::test]
async fn graceful_shutdown_lets_calls_in_flight_finish() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut warden = HttpWarden::start(dir.path(), &[]).await;
    // The stateless wire: no session GET stream whose reconnection attempts
    // would outlive the server.
    let client = warden.client(Era::Stateless, None).await;
    let pid = warden.pid() as i32;
    let slow = call(&client, "sleep", json!({"ms": 1500}));
    let signal = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc_kill(pid, 15) }, 0);
    };
    let (result, ()) = tokio::time::timeout(Duration::from_secs(30), async { tokio::join!(slow, signal) })
        .await
        .unwrap_or_else(|_| panic!("the call did not finish:\n{}", warden.log()));
    assert_eq!(support::text(&result), "slept");
    let status = tokio::time::timeout(Duration::from_secs(20), warden.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status:?}\n{}", warden.log());
    // No new connections after the signal.
    assert!(reqwest::get(warden.url.replace("/mcp", "/healthz")).await.is_err());
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, signal: i32) -> i32;
}

#[tokio::test]
async fn stdio_and_http_together_serve_the_same_catalog() {
    let dir = PluginDir::with(&["text", "clock"]);
    let mut warden = HttpWarden::start_with(dir.path(), &["--stdio"], Stdio::piped()).await;
    let http = warden.client(Era::Stateless, None).await;
    let stdin = warden.child.stdin.take().unwrap();
    let stdout = warden.child.stdout.take().unwrap();
    let stdio = Recorder::default().serve((stdout, stdin)).await.unwrap();
    let mut over_http: Vec<String> = http
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    let mut over_stdio: Vec<String> = stdio
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    over_http.sort();
    over_stdio.sort();
    assert_eq!(over_http, over_stdio);
    assert_eq!(over_http.len(), 7);
    let a = call(&http, "weekday", json!({"date": "2000-01-01"})).await;
    let b = call(&stdio, "weekday", json!({"date": "2000-01-01"})).await;
    assert_eq!(a.structured_content, b.structured_content);
    stdio.cancel().await.unwrap();
    // The HTTP side keeps serving after the stdio client leaves.
    assert_eq!(
        call(&http, "weekday", json!({"date": "2000-01-02"}))
            .await
            .structured_content
            .unwrap()["weekday"],
        "Sunday"
    );
    http.cancel().await.unwrap();
}

/// Waits until the recorder holds a `method` notification; returns them all.
async fn recorded(recorder: &Recorder, method: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let found = recorder.params_of(method);
        if !found.is_empty() {
            return found;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no {method} arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn progress_and_list_changes_reach_http_clients() {
    let dir = PluginDir::with(&["misbehave"]);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    for era in ERAS {
        let recorder = Recorder::default();
        let client = warden.client_recording(era, None, recorder.clone()).await;

        // Progress arrives on the request's own stream, before the result.
        let mut params = CallToolRequestParams::new("progress");
        params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("http-progress".into())),
        ));
        let result = client.call_tool(params).await.unwrap();
        assert_eq!(support::text(&result), "done");
        let progress: Vec<f64> = recorded(&recorder, "notifications/progress")
            .await
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert_eq!(progress, [0.0, 50.0, 100.0], "{era:?}");

        // A plugin dropped into the folder is announced: on the session's
        // GET stream (2025-11-25) or a subscriptions/listen stream (2026).
        if era == Era::Stateless {
            let filter = rmcp::model::SubscriptionFilter::builder().tools_list_changed().build();
            let mut subscription = client
                .listen(filter)
                .await
                .expect("subscriptions/listen is acknowledged");
            let listener = recorder.clone();
            tokio::spawn(async move {
                while let Ok(Some(notification)) = subscription.next().await {
                    if let rmcp::model::ServerNotification::ToolListChangedNotification(_) = notification {
                        listener.push("notifications/tools/list_changed", Value::Null);
                    }
                }
            });
        } else {
            // Give the client a moment to open its GET stream.
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let stem = format!("added-{era:?}").to_lowercase();
        let bytes = std::fs::read(support::guest("text")).unwrap();
        let staging = dir.path().join(format!(".{stem}.tmp"));
        std::fs::write(&staging, bytes).unwrap();
        std::fs::rename(&staging, dir.path().join(format!("{stem}.wasm"))).unwrap();
        recorded(&recorder, "notifications/tools/list_changed").await;
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "text_stats"), "{era:?}");
        std::fs::remove_file(dir.path().join(format!("{stem}.wasm"))).unwrap();
        client.cancel().await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
#[allow(deprecated)] // logging/setLevel: deprecated in rmcp, still on the 2025-11-25 wire
async fn resources_prompts_and_logs_over_http() {
    use rmcp::model::{GetPromptRequestParams, LoggingLevel, ReadResourceRequestParams, RequestMetaObject};
    let dir = PluginDir::with(&["full", "conformance"]);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    for era in ERAS {
        let recorder = Recorder::default();
        let client = warden.client_recording(era, None, recorder.clone()).await;

        let read = client
            .read_resource(ReadResourceRequestParams::new("mem://items/7"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents).unwrap(),
            json!([{ "uri": "mem://items/7", "mimeType": "text/plain", "text": "item 7" }]),
            "{era:?}"
        );
        let Value::Object(arguments) = json!({ "arg1": "hello", "arg2": "world" }) else {
            unreachable!()
        };
        let prompt = client
            .get_prompt(GetPromptRequestParams::new("test_prompt_with_arguments").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&prompt.messages).unwrap()[0]["content"]["text"],
            "Prompt with arguments: arg1='hello', arg2='world'"
        );

        // Log messages travel on the request's own stream, before its result.
        let mut params = CallToolRequestParams::new("test_tool_with_logging");
        match era {
            Era::Handshake => client
                .set_level(rmcp::model::SetLevelRequestParams::new(LoggingLevel::Info))
                .await
                .unwrap(),
            Era::Stateless => {
                let mut meta = RequestMetaObject::new();
                meta.set_log_level(LoggingLevel::Info);
                params.meta = Some(meta);
            }
        }
        client.call_tool(params).await.unwrap();
        let messages: Vec<Value> = recorder
            .take_at_least("notifications/message", 3)
            .await
            .into_iter()
            .map(|p| p["data"].clone())
            .collect();
        assert_eq!(
            messages,
            [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed"
            ],
            "{era:?}"
        );
        client.cancel().await.unwrap();
    }
}

/// SEP-2243: `greet_by_header` of the fixtures plugin marks `name` with `"x-mcp-header": "Name"`, so a
/// 2026-07-28 `tools/call` must carry `Mcp-Param-Name` agreeing with the body (as is, or as
/// `=?base64?…?=`). A missing, different or malformed header is refused with HTTP 400 and
/// -32020 before any plugin runs.
#[tokio::test]
async fn mcp_param_headers_must_agree_with_the_body() {
    let dir = PluginDir::with(&["conformance"]);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "greet_by_header", "arguments": {"name": "Hello"}, "_meta": meta_2026("raw", json!({}))}})
    .to_string();
    let send = async |header: Option<&str>| {
        let mut request = raw_post(&warden.url)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "greet_by_header");
        if let Some(value) = header {
            request = request.header("mcp-param-name", value);
        }
        let response = request.body(body.clone()).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let message = first_message(&text).unwrap_or_else(|| panic!("no JSON-RPC message in {text}"));
        (status, message)
    };
    for accepted in ["Hello", "=?base64?SGVsbG8=?="] {
        let (status, message) = send(Some(accepted)).await;
        assert_eq!(status, 200, "{accepted}: {message}");
        assert_eq!(message["result"]["content"][0]["text"], "Hello, Hello!", "{accepted}");
    }
    for refused in [
        None,
        Some("Goodbye"),
        Some("=?base64?SGVsbG8?="),
        Some("=?base64?SGVs!!!bG8=?="),
    ] {
        let (status, message) = send(refused).await;
        assert_eq!(status, 400, "{refused:?}: {message}");
        assert_eq!(message["error"]["code"], -32020, "{refused:?}: {message}");
    }
}

/// W3C trace context: a `traceparent` in `_meta` (2026-07-28) or in the HTTP header reaches
/// the call's log lines (the plugin's own `host.log` included) and its audit record; a
/// malformed one is ignored.
#[tokio::test]
async fn traceparent_reaches_the_logs_and_the_audit_record() {
    let dir = PluginDir::with(&["misbehave"]);
    let audit = dir.path().join("audit.jsonl");
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit.to_str().unwrap()]).await;
    let in_meta = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let in_header = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
    let send = async |meta: Option<&str>, header: Option<&str>| {
        let mut meta_object = meta_2026("raw", json!({}));
        if let Some(value) = meta {
            meta_object["traceparent"] = json!(value);
        }
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "log", "arguments": {}, "_meta": meta_object}});
        let mut request = raw_post(&warden.url)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "log");
        if let Some(value) = header {
            request = request.header("traceparent", value);
        }
        let response = request.body(body.to_string()).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.text().await.unwrap().contains("logged"));
    };
    send(Some(in_meta), None).await;
    send(None, Some(in_header)).await;
    send(Some("00-not-a-trace-01"), None).await;
    let traces: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["traceparent"].clone())
        .collect();
    assert_eq!(traces, [json!(in_meta), json!(in_header), Value::Null]);
    let log = warden.log();
    let plugin_lines: Vec<&str> = log.lines().filter(|l| l.contains("hello from the plugin")).collect();
    assert_eq!(plugin_lines.len(), 3, "{log}");
    assert!(
        plugin_lines[0].contains("trace_id=4bf92f3577b34da6a3ce929d0e0e4736"),
        "{}",
        plugin_lines[0]
    );
    assert!(
        plugin_lines[1].contains("trace_id=0af7651916cd43dd8448eb211c80319c"),
        "{}",
        plugin_lines[1]
    );
    assert!(!plugin_lines[2].contains("trace_id"), "{}", plugin_lines[2]);
}

/// 2026-07-28: a call whose first message is its answer gets one JSON body with a length
/// (a client may keep the connection); a call that reports progress first gets an SSE
/// stream carrying the progress, then the answer — nothing is dropped for the JSON form.
#[tokio::test]
async fn a_2026_answer_is_one_json_body_unless_notifications_come_first() {
    let dir = PluginDir::with(&["misbehave"]);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let post = async |meta: Value| {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "progress", "arguments": {}, "_meta": meta}})
        .to_string();
        let response = raw_post(&warden.url)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "progress")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let kind = response.headers()["content-type"].to_str().unwrap().to_string();
        let length = response.headers().get("content-length").cloned();
        (kind, length, response.text().await.unwrap())
    };

    // Without a progress token the plugin's progress goes nowhere: the answer is first.
    let (kind, length, text) = post(meta_2026("raw", json!({}))).await;
    assert_eq!(kind, "application/json", "{text}");
    assert_eq!(length.unwrap().to_str().unwrap(), text.len().to_string());
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["content"][0]["text"], "done", "{text}");

    let mut meta = meta_2026("raw", json!({}));
    meta["progressToken"] = json!("p-1");
    let (kind, _, text) = post(meta).await;
    assert!(kind.starts_with("text/event-stream"), "{kind}: {text}");
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect();
    let progress: Vec<f64> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [0.0, 50.0, 100.0], "{text}");
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 3, "{text}");
    assert_eq!(last["result"]["content"][0]["text"], "done", "{text}");
}

/// One answer, as compared between the two ways Warden serves a 2026-07-28 call: its status,
/// its media type, and its messages (each SSE event's, or the JSON body), or its text.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    kind: String,
    messages: Vec<Value>,
    text: Option<String>,
}

async fn answer_of(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let messages: Vec<Value> = if kind.starts_with("text/event-stream") {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| serde_json::from_str(data.trim()).unwrap())
            .collect()
    } else {
        serde_json::from_str(&text).into_iter().collect()
    };
    let text = messages.is_empty().then_some(text);
    Answer {
        status,
        kind,
        messages,
        text,
    }
}

/// A request: what it is, its headers beyond the standard ones (`+name` adds
/// another value, `-name` removes the header), its body.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, String);

/// Hostile and unusual requests on the 2026-07-28 wire. Warden answers an ordinary
/// `tools/call` itself, without rmcp's per-request service (transport/stateless_call.rs), and
/// hands everything else to rmcp. Each request is sent twice: as it is, and with an `Accept`
/// that carries a weight (`;q=1`), which only rmcp's path takes. The answers must be the same:
/// the fast path refuses exactly what rmcp refuses, and answers what it takes as rmcp would.
#[tokio::test]
async fn the_fast_stateless_path_answers_exactly_as_rmcp_does() {
    let dir = PluginDir::with(&["misbehave"]);
    let audit = dir.path().join("audit.jsonl");
    let warden = HttpWarden::start(
        dir.path(),
        &["--max-body", "4 KiB", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    let http = reqwest::Client::new();
    let meta = meta_2026("raw", json!({}));
    let call = |name: &str, arguments: Value, meta: Value| {
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}})
        .to_string()
    };
    let with = |key: &str, value: Value| {
        let mut meta = meta.clone();
        meta[key] = value;
        meta
    };
    let without = |key: &str| {
        let mut meta = meta.clone();
        meta.as_object_mut().unwrap().remove(key);
        meta
    };
    let standard = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let echo = call("echo", json!({"text": "hi"}), meta.clone());
    let cases: Vec<Case> = vec![
        ("an ordinary call", vec![], echo.clone()),
        (
            "arguments against the schema",
            vec![],
            call("echo", json!({"text": 5}), meta.clone()),
        ),
        (
            "an unknown tool",
            vec![("mcp-name", "nope")],
            call("nope", json!({}), meta.clone()),
        ),
        (
            "a failing tool",
            vec![("mcp-name", "fail")],
            call("fail", json!({}), meta.clone()),
        ),
        (
            "progress asked for and sent",
            vec![("mcp-name", "progress")],
            call("progress", json!({}), with("progressToken", json!("p"))),
        ),
        (
            "progress asked for, none sent",
            vec![],
            call("echo", json!({"text": "hi"}), with("progressToken", json!(7))),
        ),
        (
            "logs asked for and sent",
            vec![("mcp-name", "log")],
            call(
                "log",
                json!({}),
                with("io.modelcontextprotocol/logLevel", json!("debug")),
            ),
        ),
        (
            "logs asked for above what is sent",
            vec![("mcp-name", "log")],
            call(
                "log",
                json!({}),
                with("io.modelcontextprotocol/logLevel", json!("error")),
            ),
        ),
        (
            "Mcp-Name disagrees with the body",
            vec![("mcp-name", "fail")],
            echo.clone(),
        ),
        (
            "Mcp-Name in Base64",
            vec![("mcp-name", "=?base64?ZWNobw==?=")],
            echo.clone(),
        ),
        (
            "Mcp-Name in broken Base64",
            vec![("mcp-name", "=?base64?ZWN!!obw==?=")],
            echo.clone(),
        ),
        (
            "Mcp-Method in capitals",
            vec![("mcp-method", "TOOLS/CALL")],
            echo.clone(),
        ),
        ("Mcp-Method twice", vec![("+mcp-method", "tools/call")], echo.clone()),
        ("Mcp-Name twice", vec![("+mcp-name", "echo")], echo.clone()),
        ("Mcp-Method missing", vec![("-mcp-method", "")], echo.clone()),
        (
            "an older version in the header",
            vec![("mcp-protocol-version", "2025-11-25")],
            echo.clone(),
        ),
        (
            "a version nobody knows",
            vec![("mcp-protocol-version", "2099-01-01")],
            call(
                "echo",
                json!({"text": "hi"}),
                with("io.modelcontextprotocol/protocolVersion", json!("2099-01-01")),
            ),
        ),
        ("no version header", vec![("-mcp-protocol-version", "")], echo.clone()),
        (
            "no client info",
            vec![],
            call(
                "echo",
                json!({"text": "hi"}),
                without("io.modelcontextprotocol/clientInfo"),
            ),
        ),
        (
            "client info of the wrong type",
            vec![],
            call(
                "echo",
                json!({"text": "hi"}),
                with("io.modelcontextprotocol/clientInfo", json!(5)),
            ),
        ),
        (
            "an unknown Mcp-Param header",
            vec![("mcp-param-text", "hi")],
            echo.clone(),
        ),
        ("a foreign Host", vec![("host", "evil.example.com")], echo.clone()),
        (
            "a foreign Origin",
            vec![("origin", "http://evil.example.com")],
            echo.clone(),
        ),
        (
            "a local Origin",
            vec![("origin", "http://localhost:3000")],
            echo.clone(),
        ),
        (
            "a body over the cap",
            vec![],
            call("echo", json!({"text": "x".repeat(5000)}), meta.clone()),
        ),
        ("not JSON", vec![], "{\"jsonrpc\": \"2.0\", \"id\": 9, ".to_string()),
        ("a batch", vec![], format!("[{echo}]")),
        (
            "a notification",
            vec![],
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo", "_meta": meta}}).to_string(),
        ),
        (
            "another method",
            vec![("mcp-method", "tools/list"), ("-mcp-name", "")],
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"_meta": meta}}).to_string(),
        ),
        (
            "the wrong content type",
            vec![("content-type", "text/plain")],
            echo.clone(),
        ),
        (
            "a content type with parameters",
            vec![("content-type", "application/json; charset=utf-8")],
            echo.clone(),
        ),
        (
            "tasks declared",
            vec![("mcp-name", "fail")],
            call(
                "fail",
                json!({}),
                with(
                    "io.modelcontextprotocol/clientCapabilities",
                    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
                ),
            ),
        ),
    ];
    let send = async |accept: &str, changes: &[(&str, &str)], body: &str| {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("content-type", "application/json".parse().unwrap());
        headers.insert("accept", accept.parse().unwrap());
        for (name, value) in standard {
            headers.insert(name, value.parse().unwrap());
        }
        for (name, value) in changes {
            if let Some(name) = name.strip_prefix('+') {
                headers.append(
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    value.parse().unwrap(),
                );
            } else if let Some(name) = name.strip_prefix('-') {
                headers.remove(name);
            } else {
                headers.insert(
                    reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    value.parse().unwrap(),
                );
            }
        }
        let response = http
            .post(&warden.url)
            .headers(headers)
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        answer_of(response).await
    };
    const FAST: &str = "application/json, text/event-stream";
    const RMCP: &str = "application/json;q=1, text/event-stream";
    for (what, changes, body) in &cases {
        let fast = send(FAST, changes, body).await;
        let rmcp = send(RMCP, changes, body).await;
        assert_eq!(fast, rmcp, "{what}");
    }
    // A few answers, to be sure the comparison compared something.
    let status_of = async |what: &str| {
        let (_, changes, body) = cases.iter().find(|(w, ..)| *w == what).unwrap();
        send(FAST, changes, body).await
    };
    let ordinary = status_of("an ordinary call").await;
    assert_eq!((ordinary.status, ordinary.kind.as_str()), (200, "application/json"));
    assert_eq!(ordinary.messages[0]["result"]["content"][0]["text"], "hi");
    let progress = status_of("progress asked for and sent").await;
    assert!(progress.kind.starts_with("text/event-stream"), "{progress:?}");
    assert_eq!(progress.messages.len(), 4, "{progress:?}");
    assert_eq!(status_of("Mcp-Name disagrees with the body").await.status, 400);
    assert_eq!(status_of("a foreign Host").await.status, 403);
    assert_eq!(status_of("a foreign Origin").await.status, 403);
    assert_eq!(status_of("a body over the cap").await.status, 413);
    // Each call that ran was audited once, by whichever path ran it.
    let ran = std::fs::read_to_string(&audit).unwrap().lines().count();
    assert!(ran >= 2 * 8, "{ran} audit records");
}
