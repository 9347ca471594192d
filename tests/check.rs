//! `warden check`: validation without serving, and the grants report.

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
         filesystem.\"{}\" (read-write)\n\n",
        data.path().display()
    );
    assert!(report.contains(&expected_full), "{report}");
    // No annotations declared, no grant: all derived.
    let expected_prefixed = "  tool         prefixed_echo\n\
         \x20   served     {\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}\n\
         \x20   claimed    nothing (the plugin declares no annotations)\n\n";
    assert!(report.contains(expected_prefixed), "{report}");

    // Where the grants agree with every claim, both are shown, nothing corrected.
    std::fs::remove_file(dir.path().join("full.toml")).unwrap();
    let (ok, report) = check(&[dir.path().join("full.wasm").as_os_str()]).await;
    assert!(ok, "{report}");
    assert!(
        report.contains(
            "  tool         add\n\
             \x20   served     {\"title\":\"Add\",\"readOnlyHint\":true,\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":false}\n\
             \x20   claimed    the same\n\n"
        ),
        "{report}"
    );
}
