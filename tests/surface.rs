//! The MCP surface beyond tools, over stdio in both eras: resources,
//! templates, prompts, completions, logging and resource subscriptions,
//! served from the `full` and `conformance` test plugins.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves
#![allow(deprecated)] // logging and resources/subscribe: deprecated in rmcp, still on the 2025-11-25 wire

mod support;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams, LoggingLevel, Reference, RequestMetaObject,
    ResourceContents, SetLevelRequestParams, SubscribeRequestParams,
};
use rmcp::{ErrorData, ServiceError};
use serde_json::{Value, json};
use support::{ERAS, Era, PluginDir, serve};

fn mcp_error(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn text_of(contents: &ResourceContents) -> (&str, Option<&str>, &str) {
    match contents {
        ResourceContents::TextResourceContents {
            uri, mime_type, text, ..
        } => (uri.as_str(), mime_type.as_deref(), text.as_str()),
        other => panic!("expected text contents, got {other:?}"),
    }
}

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    let Value::Object(map) = value else {
        panic!("not an object")
    };
    map
}

#[tokio::test]
async fn resources_and_templates_are_listed_and_read() {
    let dir = PluginDir::with(&["full", "conformance"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let listed = server.client.list_resources(None).await.unwrap();
        let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "mem://readme",
                "test://static-binary",
                "test://static-text",
                "test://watched-resource"
            ],
            "{era:?}"
        );
        let readme = &listed.resources[0];
        assert_eq!(
            (readme.name.as_str(), readme.mime_type.as_deref(), readme.size),
            ("readme", Some("text/plain"), Some(14))
        );
        if era == Era::Stateless {
            assert_eq!(listed.ttl_ms, Some(0), "cache hints on the 2026 wire");
        }

        let templates = server.client.list_resource_templates(None).await.unwrap();
        let templates: Vec<&str> = templates
            .resource_templates
            .iter()
            .map(|t| t.uri_template.as_str())
            .collect();
        assert_eq!(templates, ["mem://items/{id}", "test://template/{id}/data"]);

        let read = |uri: &str| {
            server
                .client
                .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        };
        let readme = read("mem://readme").await.unwrap();
        assert_eq!(readme.contents.len(), 1);
        assert_eq!(
            text_of(&readme.contents[0]),
            ("mem://readme", Some("text/plain"), "hello resource")
        );
        if era == Era::Stateless {
            assert_eq!(readme.ttl_ms, Some(0));
        }

        // A concrete URI routed by template, to the plugin that declared it.
        let item = read("mem://items/42").await.unwrap();
        assert_eq!(
            text_of(&item.contents[0]),
            ("mem://items/42", Some("text/plain"), "item 42")
        );
        let data = read("test://template/123/data").await.unwrap();
        assert_eq!(
            text_of(&data.contents[0]).2,
            r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#
        );

        let binary = read("test://static-binary").await.unwrap();
        match &binary.contents[0] {
            ResourceContents::BlobResourceContents { blob, mime_type, .. } => {
                assert_eq!(mime_type.as_deref(), Some("image/png"));
                assert!(blob.starts_with("iVBORw0KGgo"), "a base64 PNG: {blob}");
            }
            other => panic!("expected a blob, got {other:?}"),
        }

        // Unknown URIs — matching no resource and no template, or matching a
        // template whose plugin says no — are -32602 with the URI in data.
        for uri in ["nothing://here", "mem://items/a/b"] {
            let error = mcp_error(read(uri).await);
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{uri}: {error:?}");
            assert_eq!(error.data, Some(json!({ "uri": uri })), "{uri}");
            assert!(error.message.contains(uri), "{}", error.message);
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn prompts_are_listed_rendered_and_their_arguments_checked() {
    let dir = PluginDir::with(&["full", "conformance"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let listed = server.client.list_prompts(None).await.unwrap();
        let names: Vec<&str> = listed.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "greet",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_simple_prompt"
            ],
            "{era:?}"
        );
        let greet = &listed.prompts[0];
        assert_eq!(greet.description.as_deref(), Some("Greets someone by name."));
        let argument = &greet.arguments.as_ref().unwrap()[0];
        assert_eq!((argument.name.as_str(), argument.required), ("name", Some(true)));

        let get = |name: &str, args: Value| {
            let params = GetPromptRequestParams::new(name).with_arguments(arguments(args));
            server.client.get_prompt(params)
        };
        let greeting = get("greet", json!({ "name": "Ada" })).await.unwrap();
        assert_eq!(greeting.description.as_deref(), Some("A greeting"));
        let message = serde_json::to_value(&greeting.messages).unwrap();
        assert_eq!(
            message,
            json!([{ "role": "user", "content": { "type": "text", "text": "Hello, Ada!" } }])
        );

        let embedded = get(
            "test_prompt_with_embedded_resource",
            json!({ "resourceUri": "test://example" }),
        )
        .await
        .unwrap();
        let messages = serde_json::to_value(&embedded.messages).unwrap();
        assert_eq!(messages[0]["content"]["type"], "resource");
        assert_eq!(messages[0]["content"]["resource"]["uri"], "test://example");
        assert_eq!(
            messages[1]["content"]["text"],
            "Please process the embedded resource above."
        );

        for (name, args, needle) in [
            ("greet", json!({}), "needs the argument `name`"),
            (
                "greet",
                json!({ "name": "Ada", "mood": "odd" }),
                "has no argument `mood`",
            ),
            ("no_such_prompt", json!({}), "unknown prompt `no_such_prompt`"),
        ] {
            let error = mcp_error(get(name, args).await);
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{name}: {error:?}");
            assert!(error.message.contains(needle), "{name}: {}", error.message);
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn completions_are_routed_and_capped_at_100() {
    let dir = PluginDir::with(&["full", "conformance"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let complete = |reference: Reference, argument: &str, value: &str| {
            server.client.complete(CompleteRequestParams::new(
                reference,
                ArgumentInfo::new(argument, value),
            ))
        };
        let names = complete(Reference::for_prompt("greet"), "name", "a").await.unwrap();
        assert_eq!(names.completion.values, ["Alice"], "{era:?}");
        assert_eq!(
            (names.completion.total, names.completion.has_more),
            (Some(1), Some(false))
        );

        let ids = complete(Reference::for_resource("mem://items/{id}"), "id", "4")
            .await
            .unwrap();
        assert_eq!(ids.completion.values, ["42"]);

        let bulk = complete(Reference::for_prompt("greet"), "bulk", "").await.unwrap();
        assert_eq!(bulk.completion.values.len(), 100);
        assert_eq!(bulk.completion.values[99], "v099");
        assert_eq!(
            (bulk.completion.total, bulk.completion.has_more),
            (Some(150), Some(true))
        );

        // The conformance fixture's completion may be empty, but answers.
        let fixture = complete(Reference::for_prompt("test_prompt_with_arguments"), "arg1", "")
            .await
            .unwrap();
        assert!(fixture.completion.values.len() <= 100);

        for reference in [Reference::for_prompt("nope"), Reference::for_resource("mem://nope/{x}")] {
            let error = mcp_error(complete(reference, "x", "").await);
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        }
        server.stop().await;
    }
}

/// The messages `notifications/message` carried, as (level, logger, data),
/// once `count` have arrived (or the wait ran out).
async fn log_messages(server: &support::Server, count: usize) -> Vec<(String, String, String)> {
    if count == 0 {
        // A round trip, so a message sent before the last result has been handled.
        server.client.list_tools(None).await.unwrap();
    }
    server
        .recorder
        .take_at_least("notifications/message", count)
        .await
        .into_iter()
        .map(|p| {
            (
                p["level"].as_str().unwrap().to_string(),
                p["logger"].as_str().unwrap_or_default().to_string(),
                p["data"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn plugin_logs_reach_a_client_that_asked_for_them() {
    let dir = PluginDir::with(&["conformance"]);
    let expected: Vec<(String, String, String)> = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .iter()
    .map(|m| ("info".to_string(), "conformance".to_string(), m.to_string()))
    .collect();

    // 2025-11-25: nothing until logging/setLevel, then what passes the level.
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    server.call("test_tool_with_logging", json!({})).await;
    assert_eq!(log_messages(&server, 0).await, [], "no level set: no messages");
    server
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    server.call("test_tool_with_logging", json!({})).await;
    assert_eq!(log_messages(&server, 0).await, [], "info is below warning");
    server
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    let result = server.call("test_tool_with_logging", json!({})).await;
    assert!(!support::is_error(&result));
    assert_eq!(log_messages(&server, 3).await, expected, "all three");
    let log = server.stop().await;
    assert!(
        log.contains("Tool processing data"),
        "the server log has them too:\n{log}"
    );

    // 2026-07-28: the request carries its level; logging/setLevel is gone.
    let server = serve(dir.path(), Era::Stateless, &["--no-watch"]).await;
    server.call("test_logging_tool", json!({})).await;
    assert_eq!(log_messages(&server, 0).await, [], "no level in _meta: no messages");
    let mut params = rmcp::model::CallToolRequestParams::new("test_tool_with_logging");
    let mut meta = RequestMetaObject::new();
    meta.set_log_level(LoggingLevel::Info);
    params.meta = Some(meta);
    server.client.call_tool(params).await.unwrap();
    assert_eq!(log_messages(&server, 3).await, expected);
    let error = mcp_error(
        server
            .client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
            .await,
    );
    assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
    server.stop().await;
}

#[tokio::test]
async fn a_subscribed_resource_is_reported_updated_when_its_plugin_reloads() {
    let dir = PluginDir::with(&["full"]);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    server
        .client
        .subscribe(SubscribeRequestParams::new("mem://items/7"))
        .await
        .unwrap();
    let error = mcp_error(
        server
            .client
            .subscribe(SubscribeRequestParams::new("nothing://here"))
            .await,
    );
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);

    // Rewriting the plugin reloads it: the subscribed URI may read differently.
    dir.replace("full.wasm", std::fs::read(support::guest("full")).unwrap());
    server
        .wait_until("notifications/resources/updated", || {
            server
                .recorder
                .seen
                .lock()
                .unwrap()
                .iter()
                .find(|(method, _)| method == "notifications/resources/updated")
                .map(|(_, params)| params["uri"].clone())
        })
        .await;
    let updated: Vec<Value> = server
        .recorder
        .take()
        .into_iter()
        .filter(|(method, _)| method == "notifications/resources/updated")
        .map(|(_, params)| params["uri"].clone())
        .collect();
    // One notification per reload (a rewrite may be seen as more than one).
    assert!(
        !updated.is_empty() && updated.iter().all(|uri| *uri == json!("mem://items/7")),
        "{updated:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_plugin_exposing_a_taken_uri_template_or_prompt_is_refused_whole() {
    for (kind, expected) in [
        (
            "resource",
            "its resource `mem://readme` is already provided by plugin `full`",
        ),
        (
            "template",
            "its resource template `mem://items/{id}` is already provided by plugin `full`",
        ),
        ("prompt", "its prompt `greet` is already provided by plugin `full`"),
    ] {
        // Named to sort after `full`: of two clashing plugins, the later name is refused.
        let dir = PluginDir::with(&["full"]);
        dir.add("clash", "later");
        dir.write("later.toml", format!("[environment]\nset = {{ CLASH = \"{kind}\" }}\n"));
        let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
        // The first plugin keeps serving what it declared; nothing of the
        // refused one is visible, not even what did not clash.
        let readme = server
            .client
            .read_resource(rmcp::model::ReadResourceRequestParams::new("mem://readme"))
            .await
            .unwrap();
        assert_eq!(text_of(&readme.contents[0]).2, "hello resource", "{kind}");
        let listed = server.client.list_resources(None).await.unwrap();
        assert!(listed.resources.iter().all(|r| r.uri != "clash://own"), "{kind}");
        let log = server.stop().await;
        let line = log
            .lines()
            .find(|l| l.contains("skipped plugin"))
            .unwrap_or_else(|| panic!("no skip line in:\n{log}"));
        assert!(line.contains("later.wasm") && line.contains(expected), "{kind}: {line}");
    }

    // Without a clash, both load and each serves its own.
    let dir = PluginDir::with(&["full"]);
    dir.add("clash", "later");
    let server = serve(dir.path(), Era::Stateless, &["--no-watch"]).await;
    let own = server
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new("clash://own"))
        .await
        .unwrap();
    assert_eq!(text_of(&own.contents[0]).2, "from clash");
    server.stop().await;
}
