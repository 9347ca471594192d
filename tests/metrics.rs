//! `warden serve --metrics ADDR`: the real binary, exact calls, and a scrape
//! of `/metrics` on its own listener.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::collections::BTreeMap;

use rmcp::model::CallToolRequestParams;
use serde_json::json;
use support::http::HttpWarden;
use support::{Era, PluginDir, is_error, serve, text};

const LOGGED: &str = "serving metrics at ";

/// The metrics URL a server printed in its log.
fn metrics_url(log: &str) -> String {
    let at = log
        .find(LOGGED)
        .unwrap_or_else(|| panic!("no metrics address in the log:\n{log}"));
    log[at + LOGGED.len()..].split_whitespace().next().unwrap().to_string()
}

/// Every sample of a scrape: `name{labels}` → value.
async fn scrape(url: &str) -> BTreeMap<String, f64> {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    let body = response.text().await.unwrap();
    body.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap();
            (series.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples
        .get(series)
        .unwrap_or_else(|| panic!("no series {series} in:\n{}", dump(samples)))
}

fn dump(samples: &BTreeMap<String, f64>) -> String {
    samples.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

fn series_of<'a>(samples: &'a BTreeMap<String, f64>, name: &str) -> Vec<&'a String> {
    samples
        .keys()
        .filter(|k| k.starts_with(&format!("{name}{{")) || *k == name)
        .collect()
}

#[tokio::test]
async fn counts_calls_latency_denials_loads_and_http_responses() {
    let dir = PluginDir::with(&["misbehave", "fetch"]);
    let warden = HttpWarden::start(dir.path(), &["--metrics", "127.0.0.1:0"]).await;
    let metrics = metrics_url(&warden.log());
    let metrics_base = metrics.trim_end_matches("/metrics").to_string();
    assert_ne!(
        metrics_base,
        warden.base(),
        "the metrics listener is a listener of its own"
    );

    // Before any call: the loads are counted, nothing runs.
    let before = scrape(&metrics).await;
    assert_eq!(value(&before, "warden_plugin_loads_total{event=\"loaded\"}"), 2.0);
    let origins: f64 = series_of(&before, "warden_plugin_code_total")
        .into_iter()
        .map(|s| before[s])
        .sum();
    assert_eq!(origins, 2.0, "{}", dump(&before));
    assert_eq!(value(&before, "warden_instances_in_use"), 0.0);
    assert!(series_of(&before, "warden_calls_total").is_empty());

    let client = warden.client(Era::Stateless, None).await;
    let call = |name: &str, arguments: serde_json::Value| {
        let serde_json::Value::Object(arguments) = arguments else {
            unreachable!()
        };
        client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(arguments))
    };
    for i in 0..3 {
        let result = call("echo", json!({"text": format!("call {i}")})).await.unwrap();
        assert!(!is_error(&result), "{result:?}");
    }
    let failed = call("fail", json!({})).await.unwrap();
    assert!(is_error(&failed), "{failed:?}");
    // fetch has no manifest here: its outgoing request is refused.
    let fetched = call("fetch_url", json!({"url": "http://127.0.0.1:9/"})).await.unwrap();
    assert!(text(&fetched).contains("not granted"), "{fetched:?}");

    let after = scrape(&metrics).await;
    let calls = "warden_calls_total";
    assert_eq!(
        value(
            &after,
            &format!("{calls}{{kind=\"tool-call\",plugin=\"misbehave\",target=\"echo\",outcome=\"ok\"}}")
        ),
        3.0
    );
    assert_eq!(
        value(
            &after,
            &format!("{calls}{{kind=\"tool-call\",plugin=\"misbehave\",target=\"fail\",outcome=\"tool-error\"}}")
        ),
        1.0
    );
    assert_eq!(
        value(
            &after,
            &format!("{calls}{{kind=\"tool-call\",plugin=\"fetch\",target=\"fetch_url\",outcome=\"tool-error\"}}")
        ),
        1.0
    );
    assert_eq!(series_of(&after, calls).len(), 3, "{}", dump(&after));
    assert_eq!(
        value(&after, "warden_denials_total{plugin=\"fetch\",kind=\"http\"}"),
        1.0
    );
    assert_eq!(series_of(&after, "warden_denials_total").len(), 1);
    // Latency histograms: whole call, instantiation, and the guest's own work.
    let echo = "kind=\"tool-call\",plugin=\"misbehave\",target=\"echo\"";
    for histogram in ["warden_call_duration_seconds", "warden_guest_duration_seconds"] {
        assert_eq!(value(&after, &format!("{histogram}_count{{{echo}}}")), 3.0);
        assert_eq!(value(&after, &format!("{histogram}_bucket{{{echo},le=\"+Inf\"}}")), 3.0);
        assert!(after.contains_key(&format!("{histogram}_bucket{{{echo},le=\"0.001\"}}")));
        assert!(after.contains_key(&format!("{histogram}_bucket{{{echo},le=\"60\"}}")));
        assert!(value(&after, &format!("{histogram}_sum{{{echo}}}")) > 0.0);
    }
    assert_eq!(
        value(
            &after,
            "warden_instantiate_duration_seconds_count{plugin=\"misbehave\"}"
        ),
        4.0
    );
    assert_eq!(value(&after, "warden_instances_in_use"), 0.0);
    assert!(value(&after, "warden_http_requests_total{code=\"200\"}") >= 5.0);

    // A tool no plugin serves is counted without its name: no new series.
    let unknown = call("no_such_tool_xyz", json!({})).await;
    assert!(unknown.is_err(), "{unknown:?}");
    // Nor does the MCP listener serve /metrics.
    let on_mcp = reqwest::get(format!("{}/metrics", warden.base())).await.unwrap();
    assert_eq!(on_mcp.status(), 404);
    let last = scrape(&metrics).await;
    assert!(last.keys().all(|k| !k.contains("no_such_tool_xyz")), "{}", dump(&last));
    assert_eq!(series_of(&last, calls), series_of(&after, calls));
    assert_eq!(value(&last, "warden_unknown_targets_total{kind=\"tool-call\"}"), 1.0);
    assert_eq!(value(&last, "warden_http_requests_total{code=\"404\"}"), 1.0);

    // The metrics listener serves nothing but /metrics.
    for path in ["/", "/mcp", "/healthz", "/readyz", "/metrics/x"] {
        let response = reqwest::get(format!("{metrics_base}{path}")).await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn serves_metrics_beside_stdio() {
    let dir = PluginDir::with(&["misbehave"]);
    let server = serve(dir.path(), Era::Handshake, &["--metrics", "127.0.0.1:0"]).await;
    let metrics = metrics_url(&server.log());
    let result = server.call("echo", json!({"text": "over stdio"})).await;
    assert_eq!(text(&result), "over stdio");
    let samples = scrape(&metrics).await;
    assert_eq!(
        value(
            &samples,
            "warden_calls_total{kind=\"tool-call\",plugin=\"misbehave\",target=\"echo\",outcome=\"ok\"}"
        ),
        1.0
    );
    // No HTTP listener for MCP: no HTTP responses counted.
    assert!(series_of(&samples, "warden_http_requests_total").is_empty());
    server.stop().await;
}

/// A task's life in `/metrics` (running, then its events) and in the audit log, up to its
/// expiry: `[tasks] keep` past its time limit, the record is gone and `expired` is written.
#[tokio::test]
async fn tasks_are_counted_while_running_and_their_expiry_is_audited() {
    let dir = PluginDir::with(&["conformance-interactive"]);
    // The plugin declares `slow_compute` optional; the manifest only shortens the task's life.
    dir.write(
        "conformance-interactive.toml",
        "[tasks]\ntimeout = \"3s\"\nkeep = \"1s\"\n",
    );
    let audit = dir.path().join("audit.jsonl");
    let warden = HttpWarden::start(
        dir.path(),
        &["--metrics", "127.0.0.1:0", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    let metrics = metrics_url(&warden.log());
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (_, created) = warden
        .post_2026(
            None,
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 1.5, "label": "counted"}}),
            tasks.clone(),
        )
        .await;
    let id = created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_string();
    let running = "warden_tasks_running{plugin=\"conformance-interactive\"}";
    assert_eq!(value(&scrape(&metrics).await, running), 1.0);

    let status = loop {
        let (_, got) = warden
            .post_2026(None, "tasks/get", json!({"taskId": id}), tasks.clone())
            .await;
        let status = got["result"]["status"].as_str().unwrap_or_default().to_string();
        if status != "working" {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(status, "completed");
    let samples = scrape(&metrics).await;
    assert_eq!(value(&samples, running), 0.0);
    for (event, count) in [("created", 1.0), ("completed", 1.0)] {
        let series = format!("warden_task_events_total{{plugin=\"conformance-interactive\",event=\"{event}\"}}");
        assert_eq!(value(&samples, &series), count, "{event}");
    }

    // ttlMs is 3 s + 1 s; the sweep runs every 5 s. Poll the audit log for the expiry.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let events = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let events: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|record| record["task_event"].is_string())
            .collect();
        if events.iter().any(|e| e["task_event"] == "expired") {
            break events;
        }
        assert!(std::time::Instant::now() < deadline, "no `expired` event:\n{text}");
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    let names: Vec<&str> = events.iter().map(|e| e["task_event"].as_str().unwrap()).collect();
    assert_eq!(names, ["created", "completed", "expired"], "{events:?}");
    assert!(
        events
            .iter()
            .all(|e| e["task"] == events[0]["task"] && e["tool"] == "slow_compute"),
        "one task, named by one digest: {events:?}"
    );
    assert!(
        !events[0]["task"].as_str().unwrap().contains(&id),
        "never the id itself"
    );
    let (_, gone) = warden
        .post_2026(None, "tasks/get", json!({"taskId": id}), tasks.clone())
        .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    let samples = scrape(&metrics).await;
    assert_eq!(
        value(
            &samples,
            "warden_task_events_total{plugin=\"conformance-interactive\",event=\"expired\"}"
        ),
        1.0
    );
}
