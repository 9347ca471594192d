//! The example plugins, served by the real binary and called through rmcp's
//! client in both protocol eras, with exact values.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use support::{ERAS, PluginDir, is_error, serve, text};

/// (tool, arguments, text, structured content)
fn cases() -> Vec<(&'static str, Value, &'static str, Option<Value>)> {
    vec![
        (
            "text_stats",
            json!({"text": "Hello world. How are you?\nFine!"}),
            "31 characters (31 bytes), 6 words, 2 lines, 3 sentences.",
            Some(json!({"bytes": 31, "characters": 31, "lines": 2, "sentences": 3, "words": 6})),
        ),
        (
            "text_stats",
            json!({"text": "héllo"}),
            "5 characters (6 bytes), 1 word, 1 line, 1 sentence.",
            Some(json!({"bytes": 6, "characters": 5, "lines": 1, "sentences": 1, "words": 1})),
        ),
        (
            "change_case",
            json!({"text": "parseHTTPRequest now", "case": "snake"}),
            "parse_http_request_now",
            None,
        ),
        (
            "change_case",
            json!({"text": "parseHTTPRequest now", "case": "kebab"}),
            "parse-http-request-now",
            None,
        ),
        (
            "change_case",
            json!({"text": "hello big world", "case": "camel"}),
            "helloBigWorld",
            None,
        ),
        (
            "change_case",
            json!({"text": "hello big world", "case": "constant"}),
            "HELLO_BIG_WORLD",
            None,
        ),
        (
            "slugify",
            json!({"text": "Héllo, Wörld! Ünïcode & more"}),
            "hello-world-unicode-more",
            None,
        ),
        (
            "slugify",
            json!({"text": "A very long title that goes on", "max_length": 12}),
            "a-very-long",
            None,
        ),
        (
            "date_add",
            json!({"date": "2024-01-31", "months": 1}),
            "2024-02-29 (Thursday)",
            Some(json!({"date": "2024-02-29", "weekday": "Thursday"})),
        ),
        (
            "date_add",
            json!({"date": "2024-02-29", "years": 1}),
            "2025-02-28 (Friday)",
            Some(json!({"date": "2025-02-28", "weekday": "Friday"})),
        ),
        (
            "date_add",
            json!({"date": "2026-11-30", "days": -365, "weeks": 2}),
            "2025-12-14 (Sunday)",
            Some(json!({"date": "2025-12-14", "weekday": "Sunday"})),
        ),
        (
            "date_diff",
            json!({"start": "2024-01-01", "end": "2024-12-25"}),
            "359 days from 2024-01-01 to 2024-12-25",
            Some(json!({"days": 359, "start": "2024-01-01", "end": "2024-12-25"})),
        ),
        (
            "date_diff",
            json!({"start": "2024-03-01", "end": "2024-02-01"}),
            "-29 days from 2024-03-01 to 2024-02-01",
            Some(json!({"days": -29, "start": "2024-03-01", "end": "2024-02-01"})),
        ),
        (
            "weekday",
            json!({"date": "2000-01-01"}),
            "2000-01-01 is a Saturday (ISO week 1999-W52, day 1 of 2000).",
            Some(
                json!({"date": "2000-01-01", "day_of_year": 1, "iso_week": 52, "iso_weekday": 6,
                "iso_year": 1999, "weekday": "Saturday"}),
            ),
        ),
    ]
}

#[tokio::test]
async fn every_example_tool_answers_exactly_in_both_eras() {
    let dir = PluginDir::with(&["text", "clock"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &[]).await;
        let tools = server.client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "change_case",
                "date_add",
                "date_diff",
                "now",
                "slugify",
                "text_stats",
                "weekday"
            ],
            "{era:?}"
        );
        for tool in &tools {
            assert_eq!(tool.input_schema["type"], "object");
            assert_eq!(tool.input_schema["additionalProperties"], false, "{}", tool.name);
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
            assert!(tool.description.as_ref().is_some_and(|d| d.len() > 20), "{}", tool.name);
        }
        let stats = tools.iter().find(|t| t.name == "text_stats").unwrap();
        assert_eq!(stats.input_schema["required"], json!(["text"]));
        assert_eq!(stats.output_schema.as_ref().unwrap()["type"], "object");

        for (tool, arguments, expected_text, expected_structured) in cases() {
            let result = server.call(tool, arguments.clone()).await;
            assert!(!is_error(&result), "{era:?} {tool} {arguments}: {result:?}");
            assert_eq!(text(&result), expected_text, "{era:?} {tool} {arguments}");
            assert_eq!(
                result.structured_content, expected_structured,
                "{era:?} {tool} {arguments}"
            );
        }
        server.client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn bad_values_the_schema_cannot_catch_are_explained() {
    let dir = PluginDir::with(&["clock"]);
    let server = serve(dir.path(), support::Era::Handshake, &[]).await;
    let result = server.call("date_add", json!({"date": "2024-13-01", "days": 1})).await;
    assert!(is_error(&result));
    assert_eq!(
        text(&result),
        "invalid arguments: `date` is \"2024-13-01\", but the month must be between 01 and 12 (YYYY-MM-DD)"
    );
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn now_reads_the_host_clock() {
    let dir = PluginDir::with(&["clock"]);
    let server = serve(dir.path(), support::Era::Stateless, &[]).await;
    let result = server.call("now", json!({"utc_offset": "+02:00"})).await;
    let structured = result.structured_content.expect("structured content");
    let host_now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let plugin_now = structured["unix_seconds"].as_i64().unwrap();
    assert!(
        (host_now - plugin_now).abs() < 60,
        "host {host_now}, plugin {plugin_now}"
    );
    assert_eq!(structured["utc_offset"], "+02:00");
    let datetime = structured["datetime"].as_str().unwrap();
    assert!(datetime.ends_with("+02:00") && datetime.len() == 25, "{datetime}");
    // Local time is UTC plus two hours.
    let seconds_of_day = (plugin_now + 2 * 3600).rem_euclid(86_400);
    let expected = format!(
        "{:02}:{:02}:{:02}",
        seconds_of_day / 3600,
        seconds_of_day % 3600 / 60,
        seconds_of_day % 60
    );
    assert_eq!(structured["time"], expected);
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn notes_work_inside_their_mount() {
    let notes = tempfile::tempdir().unwrap();
    std::fs::write(notes.path().join("groceries.md"), "milk\nBread and butter\n").unwrap();
    let dir = PluginDir::with(&["notes"]);
    dir.write(
        "notes.toml",
        format!(
            "[filesystem]\n\"{}\" = {{ mount = \"/notes\", access = \"read-write\" }}\n",
            notes.path().display()
        ),
    );
    let server = serve(dir.path(), support::Era::Stateless, &[]).await;
    let written = server
        .call(
            "write_note",
            json!({"name": "todo", "content": "call Bob\nbuy bread\n"}),
        )
        .await;
    assert_eq!(text(&written), "Created note \"todo\" (19 bytes).");
    assert_eq!(
        std::fs::read_to_string(notes.path().join("todo.md")).unwrap(),
        "call Bob\nbuy bread\n"
    );
    let listed = server.call("list_notes", json!({})).await;
    assert_eq!(
        listed.structured_content,
        Some(json!({"notes": [{"name": "groceries", "bytes": 22}, {"name": "todo", "bytes": 19}]}))
    );
    let found = server.call("search_notes", json!({"query": "BREAD"})).await;
    assert_eq!(
        found.structured_content,
        Some(json!({"matches": [
            {"name": "groceries", "line": 2, "text": "Bread and butter"},
            {"name": "todo", "line": 2, "text": "buy bread"}
        ], "truncated": false}))
    );
    assert_eq!(
        text(&server.call("read_note", json!({"name": "todo"})).await),
        "call Bob\nbuy bread\n"
    );
    let escape = server.call("read_note", json!({"name": "../../etc/passwd"})).await;
    assert!(is_error(&escape), "{escape:?}");
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn notes_without_a_grant_say_what_the_operator_must_do() {
    let dir = PluginDir::with(&["notes"]);
    let server = serve(dir.path(), support::Era::Handshake, &[]).await;
    let result = server.call("list_notes", json!({})).await;
    assert!(is_error(&result));
    assert!(text(&result).starts_with("no notes folder is mounted"), "{result:?}");
    server.client.cancel().await.unwrap();
}

#[tokio::test]
async fn fetch_reads_allowed_hosts_only() {
    let http = support::http_server().await;
    let dir = PluginDir::with(&["fetch"]);
    dir.write(
        "fetch.toml",
        format!("[network]\nallow = [\"127.0.0.1:{}\"]\n", http.port),
    );
    let server = serve(dir.path(), support::Era::Handshake, &[]).await;
    let result = server
        .call(
            "fetch_url",
            json!({"url": format!("http://127.0.0.1:{}/hello", http.port)}),
        )
        .await;
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(text(&result), "hello");
    assert_eq!(
        result.structured_content,
        Some(json!({"status": 200, "content_type": "text/plain", "bytes": 5, "truncated": false}))
    );
    let denied = server.call("fetch_url", json!({"url": "http://example.com/"})).await;
    assert!(is_error(&denied));
    assert!(
        text(&denied).contains("network access to example.com:80 is not granted; add \\\"example.com\\\""),
        "{denied:?}"
    );
    server.client.cancel().await.unwrap();
}

/// The values the SDK interop script checks, shared so the two cannot drift.
fn sdk_expected() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/sdk_expected.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn snippets_serves_resources_prompts_and_completions_in_both_eras() {
    use rmcp::model::{
        ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams, Reference,
    };
    let expected = sdk_expected();
    let dir = PluginDir::with(&["snippets"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let found = server
            .call("find_snippets", expected["find_snippets"]["arguments"].clone())
            .await;
        let uris: Vec<Value> = found.structured_content.unwrap()["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["uri"].clone())
            .collect();
        assert_eq!(Value::from(uris), expected["find_snippets"]["uris"], "{era:?}");

        let resources = server.client.list_resources(None).await.unwrap();
        let index = serde_json::to_value(&resources.resources[0]).unwrap();
        assert_eq!(index["uri"], expected["index"]["uri"]);
        assert_eq!(index["mimeType"], expected["index"]["mimeType"]);
        let templates = server.client.list_resource_templates(None).await.unwrap();
        assert_eq!(
            templates.resource_templates[0].uri_template,
            expected["template"]["uriTemplate"].as_str().unwrap()
        );

        let read = server
            .client
            .read_resource(ReadResourceRequestParams::new(
                expected["read"]["uri"].as_str().unwrap(),
            ))
            .await
            .unwrap();
        let contents = serde_json::to_value(&read.contents).unwrap();
        assert_eq!(contents[0]["text"], expected["read"]["text"]);
        assert_eq!(contents[0]["mimeType"], expected["read"]["mimeType"]);

        let Value::Object(arguments) = expected["explain"]["arguments"].clone() else {
            unreachable!()
        };
        let prompt = server
            .client
            .get_prompt(GetPromptRequestParams::new("explain_snippet").with_arguments(arguments))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&prompt.messages).unwrap(),
            expected["explain"]["messages"]
        );

        let complete = |reference: Reference, case: &str| {
            let argument = &expected[case]["argument"];
            server.client.complete(CompleteRequestParams::new(
                reference,
                ArgumentInfo::new(argument["name"].as_str().unwrap(), argument["value"].as_str().unwrap()),
            ))
        };
        let languages = complete(Reference::for_prompt("explain_snippet"), "complete_prompt")
            .await
            .unwrap();
        assert_eq!(
            Value::from(languages.completion.values),
            expected["complete_prompt"]["values"]
        );
        let names = complete(
            Reference::for_resource("snippets://{language}/{name}"),
            "complete_template",
        )
        .await
        .unwrap();
        assert_eq!(
            Value::from(names.completion.values),
            expected["complete_template"]["values"]
        );
        server.stop().await;
    }
}
