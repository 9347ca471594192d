//! `warden check`: validation without serving, and the grants report.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use support::PluginDir;

async fn check(args: &[&std::ffi::OsStr]) -> (bool, String) {
    let output = support::warden().arg("check").args(args).output().await.unwrap();
    (output.status.success(), String::from_utf8(output.stdout).unwrap())
}

#[tokio::test]
async fn reports_grants_and_limits_and_fails_on_any_invalid_plugin() {
    let notes_dir = tempfile::tempdir().unwrap();
    let dir = PluginDir::with(&["notes", "text", "bad-schema"]);
    dir.write(
        "notes.toml",
        format!(
            "[filesystem]\n\"{}\" = {{ mount = \"/notes\", access = \"read-write\" }}\n\
             [network]\nallow = [\"api.example.com\"]\n[environment]\nset = {{ SECRET_TOKEN = \"hunter2\" }}\n\
             [limits]\ntimeout = \"5s\"\nmemory = \"32 MiB\"\n",
            notes_dir.path().display()
        ),
    );
    let (ok, report) = check(&["--plugins".as_ref(), dir.path().as_os_str()]).await;
    assert!(!ok, "bad-schema is invalid, so the check fails:\n{report}");
    assert!(report.contains("✓ notes"), "{report}");
    assert!(
        report.contains(&format!(
            "filesystem   {} → /notes (read-write)",
            notes_dir.path().display()
        )),
        "{report}"
    );
    assert!(
        report.contains("http         api.example.com (responses up to 16 MiB)"),
        "{report}"
    );
    assert!(report.contains("environment  SECRET_TOKEN"), "{report}");
    assert!(!report.contains("hunter2"), "values are never printed");
    assert!(
        report.contains("limits       memory 32 MiB, timeout 5s, concurrency 16, output 1 MiB"),
        "{report}"
    );
    assert!(report.contains("✓ text"), "{report}");
    assert!(
        report.contains("manifest     none (no capabilities, default limits)"),
        "{report}"
    );
    assert!(report.contains("✗ ") && report.contains("bad-schema.wasm"), "{report}");
    assert!(report.ends_with("2 plugin(s) valid, 1 invalid\n"), "{report}");

    // One plugin at a time.
    let (ok, report) = check(&[dir.path().join("text.wasm").as_os_str()]).await;
    assert!(ok, "{report}");
    assert!(report.ends_with("1 plugin(s) valid, 0 invalid\n"), "{report}");

    // A manifest error names the file and the key.
    dir.write("text.toml", "[network]\nalow = []\n");
    let (ok, report) = check(&[dir.path().join("text.wasm").as_os_str()]).await;
    assert!(!ok);
    assert!(
        report.contains("text.toml") && report.contains("unknown field `alow`"),
        "{report}"
    );
}

#[tokio::test]
async fn shows_each_tools_claimed_and_served_annotations_and_the_corrections() {
    let data = tempfile::tempdir().unwrap();
    let dir = PluginDir::with(&["full", "prefixed"]);
    dir.write(
        "full.toml",
        format!(
            "[filesystem]\n\"{}\" = {{ mount = \"/data\", access = \"read-write\" }}\n",
            data.path().display()
        ),
    );
    let (ok, report) = check(&["--plugins".as_ref(), dir.path().as_os_str()]).await;
    assert!(ok, "{report}");
    let expected_full = format!(
        "  tool         add\n\
         \x20   served     {{\"title\":\"Add\",\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}}\n\
         \x20   claimed    {{\"title\":\"Add\",\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}}\n\
         \x20   corrected  readOnlyHint claimed true, served false: it can change things outside its sandbox through \
         filesystem.\"{}\" (read-write)\n\
         \x20   task       forbidden (default)\n\n",
        data.path().display()
    );
    assert!(report.contains(&expected_full), "{report}");
    // No annotations declared, no grant: all derived.
    let expected_prefixed = "  tool         prefixed_echo\n\
         \x20   served     {\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}\n\
         \x20   claimed    nothing (the plugin declares no annotations)\n\
         \x20   task       forbidden (default)\n\n";
    assert!(report.contains(expected_prefixed), "{report}");

    // Where the grants agree with every claim, both are shown, nothing corrected.
    std::fs::remove_file(dir.path().join("full.toml")).unwrap();
    let (ok, report) = check(&[dir.path().join("full.wasm").as_os_str()]).await;
    assert!(ok, "{report}");
    assert!(
        report.contains(
            "  tool         add\n\
             \x20   served     {\"title\":\"Add\",\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}\n\
             \x20   claimed    the same\n\
             \x20   task       forbidden (default)\n\n"
        ),
        "{report}"
    );
}

/// `warden call PLUGIN TOOL [JSON]`: (exit code, stdout as JSON if any, stderr).
async fn call(plugin: &std::path::Path, args: &[&str]) -> (i32, Option<serde_json::Value>, String) {
    let output = support::warden()
        .arg("call")
        .arg(plugin)
        .args(args)
        .arg("--no-cache")
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let json = (!stdout.is_empty()).then(|| serde_json::from_str(&stdout).unwrap());
    (
        output.status.code().unwrap(),
        json,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn call_runs_one_tool_and_says_how_it_went_in_its_exit_code() {
    let dir = PluginDir::with(&["text", "plain-types"]);
    let text = dir.path().join("text.wasm");
    // A result: exit 0, the MCP result on stdout, exactly as a client gets it.
    let (code, result, _) = call(&text, &["text_stats", r#"{"text": "héllo"}"#]).await;
    assert_eq!(code, 0);
    let result = result.unwrap();
    assert_eq!(
        result["content"],
        serde_json::json!([{"type": "text", "text": "5 characters (6 bytes), 1 word, 1 line, 1 sentence."}])
    );
    assert_eq!(
        result["structuredContent"],
        serde_json::json!({"bytes": 6, "characters": 5, "lines": 1, "sentences": 1, "words": 1})
    );
    assert_eq!(result["isError"], false);
    // A plain component, under its manifest's limits.
    let plain = dir.path().join("plain-types.wasm");
    let (code, result, _) = call(&plain, &["echo-u64", r#"{"v": 18446744073709551615}"#]).await;
    assert_eq!(
        (code, result.unwrap()["structuredContent"]["result"].as_u64()),
        (0, Some(u64::MAX))
    );
    // An `isError` result: exit 1.
    let (code, result, _) = call(&plain, &["checked-div", r#"{"a": 1, "b": 0}"#]).await;
    assert_eq!(code, 1);
    let result = result.unwrap();
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"][0]["text"], "cannot divide 1 by 0");
    // Malformed arguments: exit 2; arguments the schema refuses still print the result.
    let (code, result, _) = call(&plain, &["echo-u8", r#"{"v": 256}"#]).await;
    assert_eq!(code, 2);
    let message = result.unwrap()["content"][0]["text"].as_str().unwrap().to_string();
    assert!(
        message.contains("/v: 256 is greater than the maximum of 255"),
        "{message}"
    );
    let (code, result, stderr) = call(&plain, &["echo-u8", "[1]"]).await;
    assert_eq!((code, result), (2, None));
    assert!(stderr.contains("the arguments must be a JSON object"), "{stderr}");
    let (code, result, stderr) = call(&plain, &["echo-u8", "{v: 1"]).await;
    assert_eq!((code, result), (2, None));
    assert!(stderr.contains("the arguments are not JSON"), "{stderr}");
    // No such tool, or a plugin that cannot be loaded: exit 2, nothing on stdout.
    let (code, result, stderr) = call(&text, &["no_such_tool"]).await;
    assert_eq!((code, result), (2, None));
    assert!(
        stderr.contains("plugin `text` has no tool `no_such_tool`; its tools: change_case"),
        "{stderr}"
    );
    dir.write("text.toml", "[limits]\nmemory = \"lots\"\n");
    let (code, result, stderr) = call(&text, &["text_stats", r#"{"text": "a"}"#]).await;
    assert_eq!((code, result), (2, None));
    assert!(stderr.contains("limits.memory"), "{stderr}");
}

#[tokio::test]
async fn inspect_shows_what_a_component_asks_for_next_to_what_it_is_granted() {
    let dir = PluginDir::with(&["fetch", "plain-config"]);
    let inspect = |plugin: std::path::PathBuf| async move {
        let output = support::warden().arg("inspect").arg(plugin).output().await.unwrap();
        (output.status.code().unwrap(), String::from_utf8(output.stdout).unwrap())
    };
    // No manifest: the component asks for the network and is granted none.
    let (code, report) = inspect(dir.path().join("fetch.wasm")).await;
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("schemas of `fetch_url`"), "{report}");
    let line = |report: &str, interface: &str| {
        report
            .lines()
            .find(|l| l.trim_start().starts_with(interface))
            .unwrap_or_else(|| panic!("no {interface} in {report}"))
            .to_string()
    };
    assert!(
        line(&report, "wasi:http/outgoing-handler@")
            .ends_with("→ nothing: every HTTP request is refused ([network] allow)"),
        "{report}"
    );
    dir.write("fetch.toml", "[network]\nallow = [\"example.com\"]\n");
    let (_, report) = inspect(dir.path().join("fetch.wasm")).await;
    assert!(
        line(&report, "wasi:http/outgoing-handler@").ends_with("→ example.com"),
        "{report}"
    );
    // A plain component: its functions, and its configuration by key.
    dir.write("plain-config.toml", "[config]\napi-base = \"https://example.com\"\n");
    let (code, report) = inspect(dir.path().join("plain-config.wasm")).await;
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("function get-setting → tool `get-setting`"), "{report}");
    assert!(line(&report, "wasi:config/store@").ends_with("→ api-base"), "{report}");
    assert!(!report.contains("https://example.com"), "values are never printed");
    // A component that cannot be loaded: exit 2, with the reason.
    dir.add("plain-foreign", "foreign");
    let (code, report) = inspect(dir.path().join("foreign.wasm")).await;
    assert_eq!(code, 2);
    assert!(report.contains("`acme:thing/gadget@"), "{report}");
}

#[tokio::test]
async fn a_fifo_where_the_origin_record_goes_is_refused_without_waiting() {
    let dir = PluginDir::with(&["text"]);
    let fifo = dir.path().join("text.origin.json");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let checked = tokio::time::timeout(std::time::Duration::from_secs(60), check(&[dir.path().as_os_str()])).await;
    let (ok, report) = checked.expect("`warden check` waited on a FIFO");
    assert!(!ok, "{report}");
    assert!(report.contains("text.origin.json is not a regular file"), "{report}");
}

#[tokio::test]
async fn a_plugins_doc_comment_cannot_forge_lines_of_the_report() {
    let evil = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/forged-docs/evil.wasm");
    let dir = PluginDir::new();
    std::fs::copy(&evil, dir.path().join("evil.wasm")).unwrap();
    let (ok, report) = check(&["--plugins".as_ref(), dir.path().as_os_str()]).await;
    assert!(ok, "{report}");
    assert!(
        report.contains("description  Greets.\\n\\n✓ forged  (plugins/forged.wasm)\\n"),
        "{report}"
    );
    for line in report.lines() {
        assert!(!line.starts_with("✓ forged"), "{report}");
        assert!(!line.starts_with("0 plugin(s) valid"), "{report}");
        assert!(!line.starts_with("  network"), "{report}");
    }
    let inspected = support::warden()
        .arg("inspect")
        .arg(dir.path().join("evil.wasm"))
        .output()
        .await
        .unwrap();
    let inspected = String::from_utf8(inspected.stdout).unwrap();
    assert!(!inspected.lines().any(|l| l.starts_with("✓ forged")), "{inspected}");
}
