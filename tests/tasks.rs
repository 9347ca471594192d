//! MCP tasks (SEP-2663) over HTTP on the 2026-07-28 wire, driven by rmcp's own client (the
//! official Rust SDK, which implements tasks) and raw, as a hostile client sends them. The
//! fixtures plugin `conformance-interactive` serves the task tools; its manifest decides which
//! of them become tasks, and for how long they may run.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig, GetTaskParams,
    GetTaskResult, ProtocolVersion, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use support::PluginDir;
use support::http::HttpWarden;

const TASKS: &str = "[interaction]\nelicit = true\n\n[tasks]\ntimeout = \"2m\"\n\n[tasks.tools]\n\
slow_compute = \"optional\"\nconfirm_delete = \"optional\"\nfailing_job = \"required\"\n";

/// A client that declares the tasks extension and form elicitation.
#[derive(Clone, Default)]
struct TaskClient;

impl rmcp::ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_tasks()
            .build();
        capabilities.elicitation = Some(Default::default());
        ClientConfig::new(capabilities, rmcp::model::Implementation::new("task-client", "1"))
    }
}

async fn client(warden: &HttpWarden) -> RunningService<RoleClient, TaskClient> {
    let transport =
        StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(warden.url.clone()));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    TaskClient
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap_or_else(|e| panic!("cannot connect: {e}\n{}", warden.log()))
}

fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_string()).with_arguments(arguments.as_object().unwrap().clone())
}

/// Starts `name` and returns its task id (the call must become a task).
async fn create(client: &RunningService<RoleClient, TaskClient>, name: &str, arguments: Value) -> String {
    match client.call_tool_once(params(name, arguments)).await.unwrap() {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert!(
                created.task.task_id.len() >= 40,
                "ids are unguessable: {}",
                created.task.task_id
            );
            created.task.task_id
        }
        other => panic!("`{name}` did not become a task: {other:?}"),
    }
}

async fn get(client: &RunningService<RoleClient, TaskClient>, id: &str) -> GetTaskResult {
    client.get_task(GetTaskParams::new(id)).await.unwrap()
}

/// Polls until `done` holds (at most 30 s).
async fn poll_until(
    client: &RunningService<RoleClient, TaskClient>,
    id: &str,
    done: impl Fn(&GetTaskResult) -> bool,
) -> GetTaskResult {
    let started = Instant::now();
    loop {
        let task = get(client, id).await;
        if done(&task) {
            return task;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "task never got there: {task:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn result_text(task: &GetTaskResult) -> (String, bool) {
    match &task.task.payload {
        TaskPayload::Completed { result } => (
            result["content"][0]["text"].as_str().unwrap_or_default().to_string(),
            result["isError"] == true,
        ),
        other => panic!("not completed: {other:?}"),
    }
}

#[tokio::test]
async fn the_rust_sdk_client_creates_polls_answers_and_cancels_tasks() {
    let dir = PluginDir::with(&["conformance-interactive"]);
    dir.write("conformance-interactive.toml", TASKS);
    let audit_file = tempfile::NamedTempFile::new().unwrap();
    let audit = audit_file.path().to_path_buf();
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit.to_str().unwrap()]).await;
    let client = client(&warden).await;

    // Progress becomes the status message; the result is inlined once completed.
    let id = create(&client, "slow_compute", json!({"seconds": 1.5, "label": "crawl"})).await;
    let working = poll_until(&client, &id, |t| t.task.task.status_message.is_some()).await;
    let message = working.task.task.status_message.clone().unwrap();
    assert!(message.starts_with("computing `crawl`: step"), "{message}");
    let done = poll_until(&client, &id, |t| t.task.status().is_terminal()).await;
    assert_eq!(
        result_text(&done),
        ("slow_compute `crawl` finished after 1.5 s".into(), false)
    );
    assert_eq!(done.task.task.ttl_ms, Some((120 + 15 * 60) * 1000));
    assert_eq!(done.task.task.poll_interval_ms, Some(500));

    // Cancelled mid-run: the guest sees host.cancelled() and stops; the task is cancelled.
    let id = create(&client, "slow_compute", json!({"seconds": 60, "label": "long"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    client.cancel_task(CancelTaskParams::new(&id)).await.unwrap();
    let cancelled = poll_until(&client, &id, |t| t.task.status().is_terminal()).await;
    assert_eq!(cancelled.task.status(), TaskStatus::Cancelled, "{cancelled:?}");
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        asked.elapsed()
    );
    // A second cancel of a finished task is acknowledged and changes nothing.
    client.cancel_task(CancelTaskParams::new(&id)).await.unwrap();
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Cancelled);

    // A question asked while running: input_required, answered through tasks/update.
    let id = create(&client, "confirm_delete", json!({"filename": "notes.txt"})).await;
    let asking = poll_until(&client, &id, |t| t.task.status() == TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = &asking.task.payload else {
        panic!("{asking:?}")
    };
    assert_eq!(input_requests.len(), 1);
    let key = input_requests.keys().next().unwrap().clone();
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    client
        .update_task(UpdateTaskParams::new(&id, [(key, answer)].into_iter().collect()))
        .await
        .unwrap();
    let done = poll_until(&client, &id, |t| t.task.status().is_terminal()).await;
    assert_eq!(result_text(&done), ("deleted notes.txt".into(), false));

    // A tool error is `completed` with isError, never `failed`.
    let id = create(&client, "failing_job", json!({})).await;
    let done = poll_until(&client, &id, |t| t.task.status().is_terminal()).await;
    assert_eq!(
        result_text(&done),
        ("failing_job failed, as it always does".into(), true)
    );

    // The audit log follows each task by a digest of its id, never the id itself.
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(!log.contains(&id), "a task id is a bearer secret");
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r.get("task_event").is_some())
        .collect();
    let of = |event: &str| events.iter().filter(|r| r["task_event"] == event).count();
    assert_eq!(of("created"), 4, "{log}");
    // Asked once of a running task (the second cancel found it finished), then settled.
    assert_eq!(of("cancel_requested"), 1, "{log}");
    assert_eq!(of("cancelled"), 1, "{log}");
    assert_eq!(of("input_required"), 1, "{log}");
    assert_eq!(of("completed"), 3, "{log}");
}

/// One raw 2026-07-28 request from a client that declared the tasks extension.
async fn post(warden: &HttpWarden, method: &str, params: Value) -> Value {
    let capabilities = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    warden.post_2026(None, method, params, capabilities).await.1
}

async fn raw_terminal(warden: &HttpWarden, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let task = post(warden, "tasks/get", json!({"taskId": id})).await;
        let status = task["result"]["status"].as_str().unwrap_or_default().to_string();
        if ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return task["result"].clone();
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn hostile_clients_and_plugins_meet_the_task_bounds() {
    let dir = PluginDir::with(&["conformance-interactive"]);
    // A task runs for at most 1 s here, may return 40 bytes, and 20 may run at once.
    dir.write(
        "conformance-interactive.toml",
        "[limits]\noutput = \"40 B\"\nconcurrency = 32\n\n[tasks]\ntimeout = \"1s\"\n\n[tasks.tools]\nslow_compute = \"optional\"\n",
    );
    let warden = HttpWarden::start(dir.path(), &[]).await;

    // A task that would never end is ended at its time limit, as a tool error.
    let created = post(
        &warden,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 600}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let started = Instant::now();
    let ended = raw_terminal(&warden, &id).await;
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    assert!(
        ended["result"]["content"][0]["text"].as_str().unwrap().contains("1s"),
        "{ended}"
    );
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    // A result past `[limits] output` is refused like any call's.
    let created = post(
        &warden,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "x".repeat(100)}}),
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let ended = raw_terminal(&warden, &id).await;
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    let text = ended["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("output"), "{text}");
    assert!(!text.contains(&"x".repeat(100)), "{text}");

    // Guessed and other ids are unknown; tasks/* needs the extension declared.
    for guess in ["0", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &format!("{id}x")] {
        let got = post(&warden, "tasks/get", json!({"taskId": guess})).await;
        assert_eq!(got["error"]["code"], -32602, "{got}");
        let cancelled = post(&warden, "tasks/cancel", json!({"taskId": guess})).await;
        assert_eq!(cancelled["error"]["code"], -32602, "{cancelled}");
    }
    let (_, without) = warden
        .post_2026(None, "tasks/get", json!({"taskId": id}), json!({}))
        .await;
    assert_eq!(without["error"]["code"], -32021, "{without}");
    // The Mcp-Name header must name the task.
    let (status, _) = {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": id,
            "_meta": support::raw::meta_2026("raw", json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))}});
        let response = support::raw::raw_post(&warden.url)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tasks/get")
            .header("mcp-name", "another-task")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 400);

    // A client creating tasks as fast as it can: 16 run at once for one caller; the rest are
    // refused with a reason, and nothing else is held for them.
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..20 {
        let url = warden.url.clone();
        calls.spawn(async move {
            let mut params = json!({"name": "slow_compute", "arguments": {"seconds": 0.9, "label": format!("{i}")},
                "_meta": support::raw::meta_2026("raw", json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}))});
            params["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] = json!("flood");
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
            let text = support::raw::raw_post(&url)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "slow_compute")
                .body(body.to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            support::raw::answer(&text, 1).unwrap()
        });
    }
    let answers = calls.join_all().await;
    let created = answers.iter().filter(|a| a["result"]["taskId"].is_string()).count();
    let refused: Vec<&Value> = answers.iter().filter(|a| a.get("error").is_some()).collect();
    assert_eq!(created, 16, "{answers:?}");
    assert_eq!(refused.len(), 4, "{answers:?}");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 tasks running"),
        "{refused:?}"
    );
    // Still serving: a task after the flood has drained runs.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let again = post(
        &warden,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.3}}),
    )
    .await;
    assert!(again["result"]["taskId"].is_string(), "{again}");
}

/// A guest that never looks at `host.cancelled()` (hostile's `spin`, a busy loop that never
/// calls the host, made a task by the manifest) is interrupted: the task is `cancelled` within a
/// bound, and the call's audit record says it was cut off (`cancelled`; a cooperative guest that
/// returns on its own is audited with its own outcome).
#[tokio::test]
async fn tasks_cancel_interrupts_a_guest_that_ignores_cancellation() {
    let dir = PluginDir::with(&["hostile"]);
    dir.write("hostile.toml", "[tasks.tools]\nspin = \"optional\"\n");
    let audit_file = tempfile::NamedTempFile::new().unwrap();
    let audit = audit_file.path().to_path_buf();
    let warden = HttpWarden::start(dir.path(), &["--audit-log", audit.to_str().unwrap()]).await;
    let created = post(&warden, "tools/call", json!({"name": "spin", "arguments": {}})).await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let spinning = post(&warden, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(spinning["result"]["status"], "working", "{spinning}");

    let asked = Instant::now();
    let acknowledged = post(&warden, "tasks/cancel", json!({"taskId": id})).await;
    assert!(acknowledged.get("error").is_none(), "{acknowledged}");
    let ended = raw_terminal(&warden, &id).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    // host.cancelled() is never read: the interrupt 250 ms later ends it.
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "cancel took {:?}",
        asked.elapsed()
    );

    let records = support::attacks::audit_lines(&audit);
    let calls: Vec<&Value> = records.iter().filter(|r| r["target"] == "spin").collect();
    assert_eq!(calls.len(), 1, "{records:?}");
    assert_eq!(calls[0]["outcome"], "cancelled", "{:?}", calls[0]);
    assert_eq!(
        calls[0]["detail"], "the call to `spin` of plugin `hostile` was cancelled",
        "{:?}",
        calls[0]
    );
    let events: Vec<&str> = records.iter().filter_map(|r| r["task_event"].as_str()).collect();
    assert_eq!(events, ["created", "cancel_requested", "cancelled"], "{records:?}");
    // The sandbox is free again: the next call runs.
    let again = post(&warden, "tools/call", json!({"name": "spin", "arguments": {}})).await;
    assert!(again["result"]["taskId"].is_string(), "{again}");
}

#[tokio::test]
async fn a_task_required_tool_is_refused_to_a_client_without_the_extension() {
    let dir = PluginDir::with(&["conformance-interactive"]);
    dir.write("conformance-interactive.toml", TASKS);
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let (_, refused) = warden
        .post_2026(
            None,
            "tools/call",
            json!({"name": "failing_job", "arguments": {}}),
            json!({}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{refused}"
    );
    // An optional one is an ordinary call for such a client.
    let (_, ordinary) = warden
        .post_2026(
            None,
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "plain"}}),
            json!({}),
        )
        .await;
    assert_eq!(
        ordinary["result"]["content"][0]["text"], "slow_compute `plain` finished after 0.2 s",
        "{ordinary}"
    );
}

#[tokio::test]
async fn the_plugin_declares_task_support_and_the_manifest_overrides_it() {
    // The manifest says nothing of `test_tool_with_task` (the plugin declares it required)
    // and makes `failing_job` (declared required too) an ordinary call.
    let dir = PluginDir::with(&["conformance-interactive"]);
    dir.write(
        "conformance-interactive.toml",
        "[tasks.tools]\nfailing_job = \"forbidden\"\n",
    );
    let warden = HttpWarden::start(dir.path(), &[]).await;
    let (_, refused) = warden
        .post_2026(
            None,
            "tools/call",
            json!({"name": "test_tool_with_task", "arguments": {}}),
            json!({}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let created = post(&warden, "tools/call", json!({"name": "failing_job", "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "complete", "not a task: {created}");
    assert_eq!(
        created["result"]["content"][0]["text"], "failing_job failed, as it always does",
        "an ordinary (isError) result even for a client that declared tasks: {created}"
    );
    assert_eq!(created["result"]["isError"], true, "{created}");

    // `warden check` says who decided.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["check", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    for line in [
        "    task       required (declared by the plugin)",
        "    task       forbidden (the manifest's [tasks.tools])",
    ] {
        assert!(printed.contains(line), "`warden check` prints {line:?}:\n{printed}");
    }
}

#[tokio::test]
async fn an_unreachable_task_store_is_named_without_its_password() {
    let dir = PluginDir::new();
    let output = support::warden()
        .arg("serve")
        .arg("--plugins")
        .arg(dir.path())
        .args(["--task-store", "redis://:hunter2-secret@127.0.0.1:1/0"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("cannot reach the task store at redis://…@127.0.0.1:1/0"),
        "{said}"
    );
    assert!(!said.contains("hunter2"), "the password was printed: {said}");
}
