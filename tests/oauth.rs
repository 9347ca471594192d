//! OAuth mode against an authorization server this test serves on 127.0.0.1
//! (metadata and a JWKS; tokens signed here with a test-only RSA key):
//! subscriptions follow the access policy on both wires, when made and at
//! every update, answers that depend on the principal say
//! `cacheScope: private`, and the sealed `requestState` of an interactive
//! call (the fixtures plugin `conformance-interactive`, granted
//! `[interaction] elicit`) continues only the call of the principal it was
//! issued to, once.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{
    CacheScope, ErrorCode, ReadResourceRequestParams, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::RunningService;
use serde_json::{Value, json};
use support::http::HttpWarden;
use support::oauth::{RESOURCE, authorization_server, token};
use support::{Era, LONG_WAIT, PluginDir, Recorder};

/// `bob` may use `text` and `conformance-interactive` only; `alice` also
/// every resource of `full`, and `mem://items/7` by a rule of its own.
const POLICY: &str = r#"
[[allow]]
scope = "text"
plugins = ["text"]

[[allow]]
scope = "interactive"
plugins = ["conformance-interactive"]

[[allow]]
scope = "full"
plugins = ["full"]

[[allow]]
scope = "item7"
resources = ["mem://items/7"]
"#;

/// The same without the `full` rule: alice keeps `mem://items/7` only.
const POLICY_WITHOUT_FULL: &str = r#"
[[allow]]
scope = "text"
plugins = ["text"]

[[allow]]
scope = "interactive"
plugins = ["conformance-interactive"]

[[allow]]
scope = "item7"
resources = ["mem://items/7"]
"#;

struct OAuthWarden {
    warden: HttpWarden,
    dir: PluginDir,
    /// Also holds the audit log, `audit.jsonl`.
    policy_dir: tempfile::TempDir,
    alice: String,
    bob: String,
}

async fn start() -> OAuthWarden {
    let issuer = authorization_server().await;
    let dir = PluginDir::with(&["full", "text", "conformance-interactive"]);
    dir.write("conformance-interactive.toml", "[interaction]\nelicit = true\n");
    let policy_dir = tempfile::tempdir().unwrap();
    let policy = policy_dir.path().join("access.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let warden = HttpWarden::start(
        dir.path(),
        &[
            "--oauth-issuer",
            &issuer,
            "--resource",
            RESOURCE,
            "--access",
            policy.to_str().unwrap(),
            "--audit-log",
            policy_dir.path().join("audit.jsonl").to_str().unwrap(),
        ],
    )
    .await;
    OAuthWarden {
        alice: token(&issuer, "alice", "text full item7 interactive"),
        bob: token(&issuer, "bob", "text interactive"),
        warden,
        dir,
        policy_dir,
    }
}

/// The `-32602` answer to a `resources/subscribe`.
#[allow(deprecated)] // resources/subscribe: deprecated in rmcp, still on the 2025-11-25 wire
async fn refused_subscription(client: &RunningService<RoleClient, Recorder>, uri: &str) -> (ErrorCode, String, Value) {
    match client.subscribe(SubscribeRequestParams::new(uri)).await {
        Err(rmcp::ServiceError::McpError(error)) => {
            (error.code, error.message.to_string(), error.data.unwrap_or_default())
        }
        other => panic!("subscribing to {uri} was not refused: {other:?}"),
    }
}

/// A `subscriptions/listen` stream whose resource updates land in `recorder`;
/// returns what it was acknowledged with.
async fn listen(client: &RunningService<RoleClient, Recorder>, uris: &[&str], recorder: &Recorder) -> Vec<String> {
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(uris.iter().map(|u| u.to_string()))
        .build();
    let mut stream = client
        .listen(filter)
        .await
        .expect("subscriptions/listen is acknowledged");
    let acknowledged = stream.acknowledged().resource_subscriptions.clone().unwrap_or_default();
    let recorder = recorder.clone();
    tokio::spawn(async move {
        while let Ok(Some(notification)) = stream.next().await {
            if let ServerNotification::ResourceUpdatedNotification(n) = notification {
                recorder.push("notifications/resources/updated", n.params);
            }
        }
    });
    acknowledged
}

fn updated(recorder: &Recorder) -> Vec<String> {
    let mut uris: Vec<String> = recorder
        .take()
        .into_iter()
        .filter(|(method, _)| method == "notifications/resources/updated")
        .map(|(_, params)| params["uri"].as_str().unwrap().to_string())
        .collect();
    uris.sort();
    uris.dedup();
    uris
}

/// Waits until `recorder` has been told `uri` was updated.
async fn wait_for_update(recorder: &Recorder, uri: &str, what: &str, warden: &HttpWarden) {
    let started = Instant::now();
    loop {
        let seen = recorder
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|(method, params)| method == "notifications/resources/updated" && params["uri"] == uri);
        if seen {
            return;
        }
        assert!(
            started.elapsed() < LONG_WAIT,
            "{what}: no update of {uri}\n{}",
            warden.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn subscriptions_follow_the_access_policy_on_both_wires_when_made_and_at_every_update() {
    let OAuthWarden {
        warden,
        dir,
        policy_dir,
        alice,
        bob,
    } = start().await;
    let pid = warden.pid();
    let rss_before = support::status_kib(pid, "VmRSS");

    // bob (granted `text` only) probes `full`'s URIs. On the 2025-11-25 wire
    // an ungranted URI is refused exactly as one nothing serves.
    let bob_recorder = Recorder::default();
    let bob_legacy = warden
        .client_recording(Era::Handshake, Some(&bob), bob_recorder.clone())
        .await;
    let (code, message, data) = refused_subscription(&bob_legacy, "mem://items/1").await;
    let (unknown_code, unknown_message, unknown_data) = refused_subscription(&bob_legacy, "nothing://items/1").await;
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert_eq!((code, &data["uri"]), (unknown_code, &json!("mem://items/1")));
    assert_eq!(unknown_data["uri"], "nothing://items/1");
    assert_eq!(
        message.replace("mem://", "nothing://"),
        unknown_message,
        "the same answer as for an unknown URI"
    );
    assert_eq!(
        message,
        "no resource `mem://items/1`; call resources/list and resources/templates/list for what this server offers"
    );
    // The operator's audit trail records the probe (the client was told
    // nothing more than for an unknown URI); the unknown URI is not a probe
    // of anything and is not recorded.
    let audit = support::attacks::audit_lines(&policy_dir.path().join("audit.jsonl"));
    let probes: Vec<&Value> = audit.iter().filter(|r| r["outcome"] == "forbidden").collect();
    assert_eq!(probes.len(), 1, "{audit:?}");
    assert_eq!(probes[0]["principal"], "bob");
    assert_eq!(probes[0]["target"], "mem://items/1");
    assert_eq!(probes[0]["plugin"], "full");
    assert_eq!(
        probes[0]["detail"],
        "a subscription outside the caller's grant, answered as an unknown URI"
    );
    // The read is still refused, as before (403 from the HTTP layer).
    assert!(
        bob_legacy
            .read_resource(ReadResourceRequestParams::new("mem://items/1"))
            .await
            .is_err()
    );

    // On the 2026-07-28 wire, the acknowledgment drops the ungranted URI
    // just as it drops the unknown one.
    let bob_stateless = warden
        .client_recording(Era::Stateless, Some(&bob), bob_recorder.clone())
        .await;
    let acknowledged = listen(&bob_stateless, &["mem://items/1", "nothing://items/1"], &bob_recorder).await;
    assert!(acknowledged.is_empty(), "bob was acknowledged {acknowledged:?}");

    // alice may subscribe to both, on both wires.
    let alice_legacy_seen = Recorder::default();
    let alice_legacy = warden
        .client_recording(Era::Handshake, Some(&alice), alice_legacy_seen.clone())
        .await;
    #[allow(deprecated)]
    for uri in ["mem://items/1", "mem://items/7"] {
        alice_legacy.subscribe(SubscribeRequestParams::new(uri)).await.unwrap();
    }
    let alice_stream_seen = Recorder::default();
    let alice_stateless = warden.client(Era::Stateless, Some(&alice)).await;
    let acknowledged = listen(
        &alice_stateless,
        &["mem://items/1", "mem://items/7", "nothing://items/1"],
        &alice_stream_seen,
    )
    .await;
    assert_eq!(acknowledged, ["mem://items/1", "mem://items/7"]);

    // `full` reloads: alice hears of both URIs on both wires, bob of nothing.
    dir.replace("full.wasm", std::fs::read(support::guest("full")).unwrap());
    for uri in ["mem://items/1", "mem://items/7"] {
        wait_for_update(&alice_legacy_seen, uri, "alice's session", &warden).await;
        wait_for_update(&alice_stream_seen, uri, "alice's stream", &warden).await;
    }
    // Settle, then forget what was seen.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(updated(&alice_legacy_seen), ["mem://items/1", "mem://items/7"]);
    assert_eq!(updated(&alice_stream_seen), ["mem://items/1", "mem://items/7"]);
    assert_eq!(updated(&bob_recorder), Vec::<String>::new(), "bob heard of full's URIs");

    // The operator removes alice's `full` grant (a hot reload of the policy
    // file); `mem://items/7` stays granted by its own rule.
    std::fs::write(policy_dir.path().join("access.toml"), POLICY_WITHOUT_FULL).unwrap();
    let started = Instant::now();
    while !warden.log().contains("reloaded") {
        assert!(
            started.elapsed() < LONG_WAIT,
            "the policy was not reloaded\n{}",
            warden.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    dir.replace("full.wasm", std::fs::read(support::guest("full")).unwrap());
    wait_for_update(
        &alice_legacy_seen,
        "mem://items/7",
        "alice's session after the edit",
        &warden,
    )
    .await;
    wait_for_update(
        &alice_stream_seen,
        "mem://items/7",
        "alice's stream after the edit",
        &warden,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        updated(&alice_legacy_seen),
        ["mem://items/7"],
        "a removed grant ends the updates"
    );
    assert_eq!(
        updated(&alice_stream_seen),
        ["mem://items/7"],
        "a removed grant ends the updates"
    );
    let log = warden.log();
    assert!(
        log.contains("ended the subscription to `mem://items/1`: the access policy no longer grants it"),
        "{log}"
    );
    // And alice is now refused a new subscription like bob.
    let (code, message, _) = refused_subscription(&alice_legacy, "mem://items/1").await;
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(message.starts_with("no resource `mem://items/1`"), "{message}");

    // Once more: nothing comes back for the ended subscription.
    dir.replace("full.wasm", std::fs::read(support::guest("full")).unwrap());
    wait_for_update(
        &alice_legacy_seen,
        "mem://items/7",
        "alice's session, third reload",
        &warden,
    )
    .await;
    wait_for_update(
        &alice_stream_seen,
        "mem://items/7",
        "alice's stream, third reload",
        &warden,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(updated(&alice_legacy_seen), ["mem://items/7"]);
    assert_eq!(updated(&alice_stream_seen), ["mem://items/7"]);
    assert_eq!(updated(&bob_recorder), Vec::<String>::new());

    // The healthy plugin keeps answering both principals.
    for client in [&alice_stateless, &bob_stateless] {
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "slugify"), "{tools:?}");
    }
    let rss_after = support::status_kib(pid, "VmRSS");
    eprintln!("RSS {rss_before} KiB before, {rss_after} KiB after three reloads");
    assert!(
        rss_after < rss_before + 128 * 1024,
        "RSS grew from {rss_before} to {rss_after} KiB"
    );
    for client in [alice_legacy, alice_stateless, bob_legacy, bob_stateless] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn sighup_reads_the_access_policy_again() {
    // The file is unchanged, so its watcher says nothing: the line is SIGHUP's.
    let OAuthWarden { warden, policy_dir, .. } = start().await;
    assert_eq!(unsafe { libc::kill(warden.pid() as i32, libc::SIGHUP) }, 0);
    let reloaded = format!(
        "access policy {} reloaded",
        policy_dir.path().join("access.toml").display()
    );
    let deadline = Instant::now() + LONG_WAIT;
    while !warden.log().contains(&reloaded) {
        assert!(Instant::now() < deadline, "no {reloaded:?}:\n{}", warden.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(warden.log().contains("SIGHUP: reopening the audit log"));
}

#[tokio::test]
async fn answers_that_depend_on_the_principal_are_cached_privately() {
    let OAuthWarden { warden, alice, bob, .. } = start().await;
    let alice_client = warden.client(Era::Stateless, Some(&alice)).await;
    let bob_client = warden.client(Era::Stateless, Some(&bob)).await;

    let alice_tools = alice_client.list_tools(None).await.unwrap();
    let bob_tools = bob_client.list_tools(None).await.unwrap();
    assert_ne!(
        alice_tools.tools.len(),
        bob_tools.tools.len(),
        "the lists differ per principal"
    );
    for scope in [alice_tools.cache_scope, bob_tools.cache_scope] {
        assert_eq!(scope, Some(CacheScope::Private));
    }
    let templates = alice_client.list_resource_templates(None).await.unwrap();
    assert!(!templates.resource_templates.is_empty());
    assert_eq!(templates.cache_scope, Some(CacheScope::Private));
    let resources = bob_client.list_resources(None).await.unwrap();
    assert_eq!(resources.cache_scope, Some(CacheScope::Private));
    let prompts = bob_client.list_prompts(None).await.unwrap();
    assert_eq!(prompts.cache_scope, Some(CacheScope::Private));
    let read = alice_client
        .read_resource(ReadResourceRequestParams::new("mem://items/7"))
        .await
        .unwrap();
    assert_eq!(read.cache_scope, Some(CacheScope::Private));
    alice_client.cancel().await.unwrap();
    bob_client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_request_state_continues_only_the_call_of_the_principal_it_was_issued_to_and_only_once() {
    let OAuthWarden {
        warden,
        policy_dir,
        alice,
        bob,
        ..
    } = start().await;
    let elicitation = json!({"elicitation": {}});
    let call = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let retry = |state: &Value, name: &str| {
        let mut retry = call.clone();
        retry["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": name}}});
        retry["requestState"] = state.clone();
        retry
    };
    let audit = || support::attacks::audit_lines(&policy_dir.path().join("audit.jsonl"));

    // 1. alice's call asks for `user_name`, with a sealed state.
    let (status, asked) = warden
        .post_2026(Some(&alice), "tools/call", call.clone(), elicitation.clone())
        .await;
    assert_eq!(status, 200, "{asked}");
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert_eq!(
        asked["result"]["inputRequests"]["user_name"]["method"], "elicitation/create",
        "{asked}"
    );
    let state = asked["result"]["requestState"].clone();
    assert!(state.as_str().is_some_and(|s| !s.is_empty()), "{asked}");

    // 2. bob, granted the same plugin, retries with alice's state and a
    // well-formed answer: refused before any sandbox exists.
    let (_, stolen) = warden
        .post_2026(Some(&bob), "tools/call", retry(&state, "Bob"), elicitation.clone())
        .await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");
    let message = stolen["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("requestState is not one this server issued for this caller, request and arguments"),
        "{stolen}"
    );
    assert!(stolen.get("result").is_none(), "{stolen}");
    // The plugin never ran for bob: his call is audited as rejected, with no
    // timings (a call that reached a sandbox has them).
    let records = audit();
    let bobs: Vec<&Value> = records
        .iter()
        .filter(|r| r["principal"] == "bob" && r["target"] == "test_input_required_result_elicitation")
        .collect();
    assert_eq!(bobs.len(), 1, "{records:?}");
    assert_eq!(bobs[0]["outcome"], "rejected", "{:?}", bobs[0]);
    assert!(bobs[0].get("timing").is_none(), "{:?}", bobs[0]);
    assert!(
        bobs[0]["detail"]
            .as_str()
            .unwrap()
            .contains("not one this server issued for this caller"),
        "{:?}",
        bobs[0]
    );

    // 3. alice continues her own call: bob's attempt did not use the state up.
    let (status, done) = warden
        .post_2026(Some(&alice), "tools/call", retry(&state, "Alice"), elicitation.clone())
        .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice!", "{done}");
    assert_ne!(done["result"]["isError"], true, "{done}");

    // 4. The same state again, from alice herself: used already.
    let (_, replayed) = warden
        .post_2026(Some(&alice), "tools/call", retry(&state, "Alice"), elicitation.clone())
        .await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requestState has been used already"),
        "{replayed}"
    );
    assert!(replayed.get("result").is_none(), "{replayed}");

    // 5. Healthy calls still work: bob's own round trip, and a plain tool.
    let (_, asked) = warden
        .post_2026(Some(&bob), "tools/call", call.clone(), elicitation.clone())
        .await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let bobs_state = asked["result"]["requestState"].clone();
    assert_ne!(bobs_state, state);
    let (_, done) = warden
        .post_2026(Some(&bob), "tools/call", retry(&bobs_state, "Bob"), elicitation.clone())
        .await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Bob!", "{done}");
    let (status, slug) = warden
        .post_2026(
            Some(&alice),
            "tools/call",
            json!({"name": "slugify", "arguments": {"text": "Still Here"}}),
            json!({}),
        )
        .await;
    assert_eq!(status, 200, "{slug}");
    assert_eq!(slug["result"]["content"][0]["text"], "still-here", "{slug}");

    // The audit trail: alice's three calls (asked, done, replay refused).
    let alices: Vec<String> = audit()
        .iter()
        .filter(|r| r["principal"] == "alice" && r["target"] == "test_input_required_result_elicitation")
        .map(|r| r["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(alices, ["input-required", "ok", "rejected"]);
}

/// A task answers only its creator: bob, holding alice's real task id, gets "no task" from tasks/*.
#[tokio::test]
async fn a_task_answers_only_the_principal_that_created_it() {
    let oauth = start().await;
    let (warden, alice, bob) = (&oauth.warden, oauth.alice.as_str(), oauth.bob.as_str());
    let tasks = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
    let post = async |token: &str, method: &str, params: Value| {
        warden.post_2026(Some(token), method, params, tasks.clone()).await
    };
    let call = json!({"name": "confirm_delete", "arguments": {"filename": "notes.txt"}});
    let id = post(alice, "tools/call", call).await.1["result"]["taskId"].clone();
    let poll = async |until: &str| {
        let started = Instant::now();
        loop {
            let got = post(alice, "tasks/get", json!({"taskId": id})).await.1["result"].clone();
            if got["status"] == until || started.elapsed() > LONG_WAIT {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let asked = poll("input_required").await;
    let (key, _) = asked["inputRequests"].as_object().unwrap().iter().next().unwrap();
    let answer = json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"confirm": true}}}});
    let no_task = json!(format!("no task `{}`", id.as_str().unwrap()));
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", answer.clone()),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let refused = post(bob, method, params).await.1;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        assert_eq!(refused["error"]["message"], no_task, "{method}");
    }
    assert_eq!(post(alice, "tasks/get", json!({"taskId": id})).await.1["result"], asked);
    assert!(post(alice, "tasks/update", answer).await.1.get("error").is_none());
    let done = poll("completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "deleted notes.txt", "{done}");
    let events: Vec<String> = support::attacks::audit_lines(&oauth.policy_dir.path().join("audit.jsonl"))
        .iter()
        .filter_map(|r| Some(format!("{} {}", r["principal"], r["task_event"].as_str()?)))
        .collect();
    let expected = ["created", "input_required", "working", "completed"].map(|e| format!("\"alice\" {e}"));
    assert_eq!(events, expected, "bob's cancel was no request");
}

#[tokio::test]
async fn an_issuer_typed_with_credentials_is_refused_without_printing_them() {
    let dir = PluginDir::new();
    let policy_dir = tempfile::tempdir().unwrap();
    let policy = policy_dir.path().join("access.toml");
    std::fs::write(&policy, POLICY).unwrap();
    for issuer in [
        "https://admin:PASSW0RD@127.0.0.1:1/",
        "https://127.0.0.1:1/?token=QSECRET",
    ] {
        let output = support::warden()
            .arg("serve")
            .arg("--plugins")
            .arg(dir.path())
            .args([
                "--http",
                "127.0.0.1:0",
                "--oauth-issuer",
                issuer,
                "--resource",
                RESOURCE,
            ])
            .arg("--access")
            .arg(&policy)
            .stdin(std::process::Stdio::null())
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{said}");
        assert!(
            said.contains("OAuth mode: cannot use the authorization server https://"),
            "{said}"
        );
        assert!(!said.contains("PASSW0RD") && !said.contains("QSECRET"), "{said}");
    }
}
