//! The real `warden` binary over stdio, driven by rmcp's client in both
//! protocol eras.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::ErrorCode;
use serde_json::json;
use support::{ERAS, Era, PluginDir, is_error, serve, text};

#[tokio::test]
async fn unknown_tool_is_invalid_params_in_both_eras() {
    let dir = PluginDir::with(&["misbehave"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &[]).await;
        match server.try_call("no_such_tool", json!({})).await {
            Err(ServiceError::McpError(error)) => {
                assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{era:?}");
                assert!(
                    error.message.contains("unknown tool `no_such_tool`"),
                    "{}",
                    error.message
                );
            }
            other => panic!("{era:?}: expected -32602, got {other:?}"),
        }
        server.client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn arguments_that_violate_the_schema_are_explained_without_running_the_plugin() {
    let dir = PluginDir::with(&["misbehave"]);
    let audit = dir.path().join("audit.jsonl");
    for era in ERAS {
        let server = serve(dir.path(), era, &["--audit-log", audit.to_str().unwrap()]).await;
        let result = server.call("echo", json!({"text": 5, "extra": true})).await;
        assert!(is_error(&result), "{era:?}: {result:?}");
        let message = text(&result);
        assert!(message.contains("input schema of `echo`"), "{message}");
        assert!(message.contains("/text: 5 is not of type \"string\""), "{message}");
        assert!(message.contains("extra"), "{message}");
        let result = server.call("echo", json!({})).await;
        assert!(text(&result).contains("\"text\" is a required property"), "{result:?}");
        server.client.cancel().await.unwrap();
    }
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(lines.iter().all(|l| l["outcome"] == "rejected" && l["tool"] == "echo"));
}

#[tokio::test]
async fn plugin_errors_traps_and_timeouts_are_tool_errors_and_the_next_call_works() {
    let dir = PluginDir::with(&["misbehave"]);
    dir.write("misbehave.toml", "[limits]\ntimeout = \"1s\"\n");
    let audit = dir.path().join("audit.jsonl");
    for era in ERAS {
        let server = serve(dir.path(), era, &["--audit-log", audit.to_str().unwrap()]).await;

        let failed = server.call("fail", json!({})).await;
        assert!(is_error(&failed));
        assert_eq!(text(&failed), "the tool failed on purpose");

        let trapped = server.call("panic", json!({})).await;
        assert!(is_error(&trapped));
        assert_eq!(
            text(&trapped),
            "plugin `misbehave` crashed while running `panic`: the plugin panicked (wasm `unreachable` executed) \
             — it printed: boom"
        );

        let started = Instant::now();
        let spun = server.call("spin", json!({})).await;
        let waited = started.elapsed();
        assert!(is_error(&spun));
        assert_eq!(
            text(&spun),
            "plugin `misbehave` exceeded its 1s time limit while running `spin`; \
             the operator can raise `[limits] timeout` in misbehave.toml"
        );
        assert!(waited >= Duration::from_secs(1), "{waited:?}");

        let echoed = server.call("echo", json!({"text": "still here"})).await;
        assert!(!is_error(&echoed), "{era:?}: {echoed:?}");
        assert_eq!(text(&echoed), "still here");
        assert_eq!(echoed.structured_content, Some(json!({"text": "still here"})));
        server.client.cancel().await.unwrap();
    }
    let outcomes: Vec<String> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            "tool-error",
            "trap",
            "timeout",
            "ok",
            "tool-error",
            "trap",
            "timeout",
            "ok"
        ]
    );
    let line: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&audit).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(line["plugin"], "misbehave");
    assert_eq!(line["exposed_name"], "echo");
    assert_eq!(line["argument_bytes"], json!({"text": "still here"}).to_string().len());
    assert!(line["duration_ms"].as_f64().unwrap() > 0.0);
    assert!(
        !std::fs::read_to_string(&audit).unwrap().contains("still here"),
        "arguments are never logged"
    );
}

#[tokio::test]
async fn a_plugin_writing_to_stdout_cannot_corrupt_the_protocol() {
    let dir = PluginDir::with(&["misbehave"]);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let shouted = server.call("shout", json!({})).await;
    assert_eq!(text(&shouted), "shouted");
    let echoed = server.call("echo", json!({"text": "after the noise"})).await;
    assert_eq!(text(&echoed), "after the noise");
    assert!(
        server.stop().await.contains("NOISE ON STDOUT"),
        "the plugin's stdout is logged to stderr"
    );
}

#[tokio::test]
async fn output_schema_violations_and_oversized_results_are_refused() {
    let dir = PluginDir::with(&["misbehave"]);
    dir.write("misbehave.toml", "[limits]\noutput = \"1 KiB\"\n");
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let bad = server.call("bad_output", json!({})).await;
    assert!(is_error(&bad));
    let message = text(&bad);
    assert!(
        message.contains("does not match the tool's `output-schema`"),
        "{message}"
    );
    assert!(message.contains("/n"), "{message}");
    // The limit counts each item's framing (32 bytes) too.
    let small = server.call("big", json!({"bytes": 990})).await;
    assert_eq!(text(&small).len(), 990);
    let big = server.call("big", json!({"bytes": 5000})).await;
    assert!(is_error(&big));
    assert_eq!(
        text(&big),
        "plugin `misbehave` returned 5032 bytes from `big`, more than its output limit of 1 KiB; \
         the operator can raise `[limits] output` in misbehave.toml"
    );
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn broken_and_malformed_plugins_are_skipped_and_the_rest_serve() {
    let dir = PluginDir::with(&[
        "misbehave",
        "bad-decl",
        "bad-tasks",
        "bad-schema",
        "dup-tools",
        "load-trap",
        "future-abi",
    ]);
    dir.write("garbage.wasm", b"this is not wasm");
    let component = std::fs::read(support::guest("misbehave")).unwrap();
    dir.write("half-written.wasm", &component[..component.len() / 2]);
    dir.write("core-module.wasm", b"\0asm\x01\0\0\0");
    dir.write(
        "pinned.toml",
        "[plugin]\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n",
    );
    dir.add("misbehave", "pinned");
    dir.write("typo.toml", "[limits]\ntimeuot = \"1s\"\n");
    dir.add("misbehave", "typo");

    for era in ERAS {
        let server = serve(dir.path(), era, &[]).await;
        let names = server.tool_names().await;
        assert!(names.contains(&"echo".to_string()), "{names:?}");
        assert!(
            !names.contains(&"fine".to_string()),
            "bad-decl is refused whole: {names:?}"
        );
        assert!(!names.contains(&"twice".to_string()), "{names:?}");
        assert!(
            !names.contains(&"flood".to_string()),
            "bad-tasks is refused whole: {names:?}"
        );
        assert!(!names.contains(&"hello".to_string()), "{names:?}");
        let echoed = server.call("echo", json!({"text": "ok"})).await;
        assert_eq!(text(&echoed), "ok");
        let log = server.stop().await;
        let expectations = [
            ("bad-decl.wasm", "\"bad name!\" must be 1 to 64 characters"),
            (
                "bad-tasks.wasm",
                "it declares 100000 tool executions, more than the 1000 a plugin may",
            ),
            ("bad-schema.wasm", "must be a JSON Schema object, found an array"),
            ("dup-tools.wasm", "tool \"twice\" is declared twice"),
            ("load-trap.wasm", "crashed while running `list-tools`"),
            ("future-abi.wasm", "warden:plugin/tools@9.0.0"),
            ("garbage.wasm", "not a WebAssembly file"),
            ("half-written.wasm", "cannot compile the component"),
            ("core-module.wasm", "core WebAssembly module, not a component"),
            ("pinned.wasm", "pins `plugin.sha256`"),
            ("typo.wasm", "timeuot"),
        ];
        for (file, reason) in expectations {
            let line = log
                .lines()
                .find(|l| l.contains("skipped plugin") && l.contains(file))
                .unwrap_or_else(|| panic!("no skip line for {file} in:\n{log}"));
            assert!(line.contains(reason), "{file}: {line}");
        }
        // The plugins named misbehave, pinned and typo expose the same tools:
        // only the first by name (misbehave) serves, and the clash is reported.
        assert!(
            log.contains("already provided by plugin `misbehave`") || log.contains("pins"),
            "{log}"
        );
    }
}

#[tokio::test]
async fn tool_collisions_refuse_the_later_plugin_by_name() {
    let dir = PluginDir::new();
    dir.add("misbehave", "alpha").add("misbehave", "beta");
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let result = server.call("echo", json!({"text": "x"})).await;
    assert_eq!(text(&result), "x");
    let log = server.stop().await;
    let line = log.lines().find(|l| l.contains("skipped plugin")).expect("a skip line");
    assert!(
        line.contains("beta.wasm") && line.contains("already provided by plugin `alpha`"),
        "{line}"
    );
}

#[tokio::test]
async fn tools_list_is_sorted_and_carries_cache_hints() {
    let dir = PluginDir::with(&["misbehave"]);
    let server = serve(dir.path(), Era::Stateless, &[]).await;
    let page = server.client.list_tools(None).await.unwrap();
    let names: Vec<String> = page.tools.iter().map(|t| t.name.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(page.ttl_ms, Some(0));
    assert_eq!(page.cache_scope, Some(rmcp::model::CacheScope::Public));
    assert_eq!(page.next_cursor, None);
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn plugin_progress_reaches_the_client_before_the_result() {
    let dir = PluginDir::with(&["misbehave"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &[]).await;
        let arguments = serde_json::Map::new();
        let mut params = rmcp::model::CallToolRequestParams::new("progress").with_arguments(arguments);
        params.meta = Some(rmcp::model::RequestMetaObject::with_progress_token(
            rmcp::model::ProgressToken(rmcp::model::NumberOrString::String("tok-1".into())),
        ));
        let result = server.client.call_tool(params).await.unwrap();
        assert_eq!(text(&result), "done");
        let seen = server.recorder.take();
        let progress: Vec<(f64, Option<f64>)> = seen
            .iter()
            .filter(|(method, _)| method == "notifications/progress")
            .map(|(_, p)| (p["progress"].as_f64().unwrap(), p["total"].as_f64()))
            .collect();
        // rmcp's client may substitute its own token; every notification carries the same one.
        let tokens: std::collections::HashSet<String> =
            seen.iter().map(|(_, p)| p["progressToken"].to_string()).collect();
        assert_eq!(tokens.len(), 1, "{seen:?}");
        assert_eq!(
            progress,
            [(0.0, Some(100.0)), (50.0, Some(100.0)), (100.0, Some(100.0))],
            "{era:?}"
        );

        server.client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn nothing_a_call_leaves_in_memory_reaches_the_next_call() {
    let dir = PluginDir::with(&["misbehave"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    support::attacks::assert_calls_remember_nothing(&server).await;
    server.stop().await;
}
