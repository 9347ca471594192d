//! What a plugin declares cannot exhaust or fool the host: schemas whose
//! evaluation would explode, oversized declarations and URI claims that
//! reach into another plugin's are refused at load, with the reason in the
//! log, while the other plugins serve; and the costliest schema allowed
//! checks large arguments and results within bounded time and memory.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};
use support::{Era, PluginDir, Server, is_error, serve, text};

/// Peak resident memory of Warden serving `dir`, from /proc, in MiB.
fn peak_rss_mib(dir: &std::path::Path) -> u64 {
    let needle = dir.to_string_lossy().into_owned();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline);
        if !cmdline.contains("serve") || !cmdline.contains(&needle) {
            continue;
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        return kib / 1024;
    }
    panic!("no warden process serving {needle}");
}

/// Generous: Warden serving a few plugins stays far below it; the nested
/// `$ref` schema alone made it allocate 24 GB before it was bounded.
const PEAK_RSS_BOUND_MIB: u64 = 300;

/// A plugin other than the one under attack must keep working.
async fn healthy(server: &Server) {
    let result = server.call("text_stats", json!({"text": "still fine"})).await;
    assert!(!is_error(&result), "the healthy plugin must keep working: {result:?}");
    assert_eq!(result.structured_content.unwrap()["words"], 2);
}

/// The log line that refused `file`.
fn refusal<'a>(log: &'a str, file: &str) -> &'a str {
    log.lines()
        .find(|l| l.contains("skipped plugin") && l.contains(file))
        .unwrap_or_else(|| panic!("{file} was not refused; log:\n{log}"))
}

#[tokio::test]
async fn each_declaration_attack_is_refused_with_its_reason_and_the_rest_serve() {
    // An HTTP server the `remote-ref` schema points at: no connection may arrive.
    let remote = support::http_server().await;
    let attacks = [
        (
            "nested-ref",
            vec![
                "tool \"nested_ref\"",
                "field `input-schema`",
                "with its `$ref`s followed",
            ],
        ),
        (
            "output-nested-ref",
            vec![
                "tool \"output_nested_ref\"",
                "field `output-schema`",
                "with its `$ref`s followed",
            ],
        ),
        (
            "ref-cycle",
            vec!["tool \"ref_cycle\"", "applies to the same value forever"],
        ),
        (
            "recursive",
            vec!["tool \"recursive\"", "is recursive", "declare the recursive part"],
        ),
        (
            "backtracking-regex",
            vec!["tool \"backtracking_regex\"", "not a valid JSON Schema"],
        ),
        (
            "remote-ref",
            vec!["tool \"remote_ref\"", "only references within the schema"],
        ),
        (
            "unevaluated",
            vec!["tool \"unevaluated\"", "`unevaluatedProperties`", "not supported"],
        ),
        (
            "wide-enum-items",
            vec!["tool \"wide_enum_items\"", "cost units of checks to a single value"],
        ),
        (
            "long-locations",
            vec![
                "tool \"long_locations\"",
                "bytes of schema locations",
                "more than 16 MiB",
            ],
        ),
        ("huge-schema", vec!["tool \"huge_schema\"", "KiB a schema may have"]),
        ("many-tools", vec!["declares 1001 tools, more than the 1000"]),
        ("many-resources", vec!["declares 10001 resources, more than the 10000"]),
        ("huge-declarations", vec!["more than the 8 MiB a plugin may declare"]),
        ("long-template", vec!["bytes long, more than 1024"]),
    ];
    let dir = PluginDir::with(&["text"]);
    for (attack, _) in &attacks {
        let name = format!("bomb-{attack}");
        dir.add("schema-bomb", &name);
        dir.write(
            &format!("{name}.toml"),
            format!(
                "[environment]\nset = {{ BOMB = \"{attack}\", REMOTE = \"http://127.0.0.1:{}/schema.json\" }}\n",
                remote.port
            ),
        );
    }
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    healthy(&server).await;
    assert_eq!(
        server.tool_names().await,
        ["change_case", "slugify", "text_stats"],
        "only the healthy plugin's tools are served"
    );
    let rss = peak_rss_mib(dir.path());
    let log = server.stop().await;
    for (attack, expected) in &attacks {
        let line = refusal(&log, &format!("bomb-{attack}.wasm"));
        for needle in expected {
            assert!(line.contains(needle), "{attack}: {needle:?} not in {line}");
        }
    }
    assert_eq!(remote.connections.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(rss < PEAK_RSS_BOUND_MIB, "peak RSS {rss} MiB");
    eprintln!("peak RSS loading {} attacks: {rss} MiB", attacks.len());
}

#[tokio::test]
async fn the_costliest_schema_allowed_checks_large_values_within_bounds() {
    let dir = PluginDir::with(&["text"]);
    dir.add("schema-bomb", "bomb");
    let server = serve(dir.path(), Era::Stateless, &["--no-watch"]).await;
    let hang = std::time::Duration::from_secs(120);
    let call = async |arguments: Value| {
        let result = tokio::time::timeout(hang, server.call("at_limit", arguments))
            .await
            .expect("no hang");
        healthy(&server).await;
        result
    };

    // Every item matches only the last value of the last enum: the most
    // work each item can take, on as many items as one check may afford.
    let result = call(json!({"items": vec![1859; 20_000]})).await;
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(text(&result), "checked 20000 items");

    // Ten times as many are refused before any checking.
    let result = call(json!({"items": vec![1859; 200_000]})).await;
    assert!(
        is_error(&result) && text(&result).contains("too large to check"),
        "{result:?}"
    );

    // Invalid and too large to explain item by item (jsonschema would copy
    // every value into the `anyOf` explanation).
    let result = call(json!({"items": vec![-2; 1_000]})).await;
    assert!(
        is_error(&result) && text(&result).contains("too large to list each problem"),
        "{result:?}"
    );

    // Small and invalid: explained, and the list is bounded.
    let result = call(json!({"items": vec![-2; 3]})).await;
    let explained = text(&result);
    assert!(
        is_error(&result) && explained.contains("/items/0") && explained.contains("/items/2"),
        "{explained}"
    );

    // `^(a+)+$` against 100 000 `a`s and a `!`: exponential for a
    // backtracking engine, linear here.
    let result = call(json!({"word": format!("{}!", "a".repeat(100_000))})).await;
    assert!(
        is_error(&result) && text(&result).contains("does not match"),
        "{result:?}"
    );
    let result = call(json!({"word": "a".repeat(100_000)})).await;
    assert!(!is_error(&result), "{result:?}");

    // Structured results are held to the same budget.
    let output = async |count: usize| {
        let result = tokio::time::timeout(hang, server.call("at_limit_output", json!({ "count": count })))
            .await
            .expect("no hang");
        healthy(&server).await;
        result
    };
    let result = output(1_000).await;
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(
        result.structured_content.unwrap()["items"].as_array().unwrap().len(),
        1_000
    );
    let result = output(300_000).await;
    assert!(
        is_error(&result) && text(&result).contains("too large to check"),
        "{result:?}"
    );

    let rss = peak_rss_mib(dir.path());
    server.stop().await;
    assert!(rss < PEAK_RSS_BOUND_MIB, "peak RSS {rss} MiB");
    eprintln!("peak RSS checking large values: {rss} MiB");
}

#[tokio::test]
async fn overlapping_uri_claims_refuse_the_later_plugin() {
    for (clash, expected) in [
        (
            "under-template",
            "its resource `mem://items/7` matches the resource template `mem://items/{id}` of plugin `full`",
        ),
        (
            "template-over-resource",
            "its resource template `mem://{name}` matches the resource `mem://readme` of plugin `full`",
        ),
        (
            "overlapping-template",
            "its resource template `mem://{kind}/{id}` and the resource template `mem://items/{id}` both match",
        ),
    ] {
        // Named to sort after `full`: of two clashing plugins, the later name is refused.
        let dir = PluginDir::with(&["full", "text"]);
        dir.add("clash", "later");
        dir.write(
            "later.toml",
            format!("[environment]\nset = {{ CLASH = \"{clash}\" }}\n"),
        );
        let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
        // Reads meant for `full` still reach it.
        let item = server
            .client
            .read_resource(ReadResourceRequestParams::new("mem://items/7"))
            .await
            .unwrap();
        let body = serde_json::to_value(&item.contents[0]).unwrap();
        assert_eq!(body["text"], "item 7", "{clash}");
        let readme = server
            .client
            .read_resource(ReadResourceRequestParams::new("mem://readme"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&readme.contents[0]).unwrap()["text"],
            "hello resource"
        );
        healthy(&server).await;
        let listed = server.client.list_resources(None).await.unwrap();
        assert!(listed.resources.iter().all(|r| r.uri != "clash://own"), "{clash}");
        let log = server.stop().await;
        let line = refusal(&log, "later.wasm");
        assert!(
            line.contains(expected) && line.contains("plugin `later` is refused whole"),
            "{clash}: {line}"
        );
    }
}

#[tokio::test]
async fn the_examples_and_test_plugins_with_resources_load_together() {
    // Templates and URIs of different plugins that do not overlap, and
    // overlaps within one plugin (most specific wins), are all fine.
    let dir = PluginDir::with(&[
        "clock",
        "fetch",
        "notes",
        "snippets",
        "text",
        "conformance",
        "full",
        "clash",
    ]);
    dir.add("schema-bomb", "bomb");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    healthy(&server).await;
    let log = server.stop().await;
    assert!(!log.contains("skipped plugin"), "{log}");
}
