//! Secrets: `[config]` and `[environment] set` values read from Warden's
//! environment (`{ env = "VAR" }`) or a file (`{ file = "/path" }`). They reach
//! the plugin, and nothing Warden writes: not the server log, not the audit
//! log, not `warden check` or `warden inspect` — even when the plugin repeats
//! them through every channel it has (`telltale`, `plain-config`'s
//! `print-setting`, a request to a host nobody granted).

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves
#![allow(deprecated)] // logging/setLevel: deprecated in rmcp, still on the 2025-11-25 wire

mod support;

use std::path::Path;

use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use serde_json::{Value, json};
use support::{Era, PluginDir, is_error, text};

/// What the `warden` process has in its environment (never in a manifest).
const FROM_ENV: &str = "env-secret-5b8e21d4";
/// What the secret file holds, with a trailing newline (`echo … > file`).
const FROM_FILE: &str = "file-secret-c07a9f33";
const VARIABLE: &str = "WARDEN_TEST_API_KEY";

/// A plugins folder whose manifests take secrets from `VARIABLE` and from
/// `secret_file`.
fn plugins(secret_file: &Path) -> PluginDir {
    let file = secret_file.display();
    let dir = PluginDir::with(&["plain-config", "telltale", "hostile"]);
    dir.write(
        "plain-config.toml",
        format!(
            "[config]\napi-base = \"https://example.com\"\napi-key = {{ env = \"{VARIABLE}\" }}\n\
             token = {{ file = \"{file}\" }}\n"
        ),
    );
    dir.write(
        "telltale.toml",
        format!("[environment]\nset = {{ API_KEY = {{ env = \"{VARIABLE}\" }}, TOKEN = {{ file = \"{file}\" }} }}\n"),
    );
    dir.write(
        "hostile.toml",
        format!("[environment]\nset = {{ TOKEN = {{ file = \"{file}\" }} }}\n"),
    );
    dir
}

fn secret_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("token");
    std::fs::write(&path, format!("{FROM_FILE}\n")).unwrap();
    path
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in [FROM_ENV, FROM_FILE] {
        assert!(!text.contains(secret), "{what} shows {secret}:\n{text}");
    }
}

/// `warden ARGS…` with the variable set, as the server has it.
async fn warden(args: &[&std::ffi::OsStr], with_variable: bool) -> (bool, String) {
    let mut command = support::warden();
    if with_variable {
        command.env(VARIABLE, FROM_ENV);
    } else {
        command.env_remove(VARIABLE);
    }
    let output = command.args(args).output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    (output.status.success(), format!("{stdout}{stderr}"))
}

#[tokio::test]
async fn secrets_reach_the_plugin_and_nothing_warden_writes() {
    let secrets = tempfile::tempdir().unwrap();
    let file = secret_file(secrets.path());
    let dir = plugins(&file);
    let audit = secrets.path().join("audit.jsonl");
    let mut command = support::warden();
    command.env(VARIABLE, FROM_ENV);
    // `-v`: Warden's own debug lines too. (Not `-vv`: it lets rmcp log every
    // message on the wire, results included, which are not redacted.)
    let server = support::serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &["--no-watch", "-v", "--audit-log", audit.to_str().unwrap()],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    server
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .unwrap();
    let answer = |tool: &'static str, arguments: Value| {
        let server = &server;
        async move {
            let result = server.call(tool, arguments.clone()).await;
            assert!(!is_error(&result), "{tool} {arguments}: {result:?}");
            text(&result)
        }
    };

    // The values reach the component: results are the plugin's own output.
    assert_eq!(answer("get-setting", json!({"key": "api-key"})).await, FROM_ENV);
    assert_eq!(answer("get-setting", json!({"key": "token"})).await, FROM_FILE);
    assert_eq!(
        answer("get-setting", json!({"key": "api-base"})).await,
        "https://example.com"
    );
    assert_eq!(answer("print-setting", json!({"key": "api-key"})).await, FROM_ENV);
    assert_eq!(answer("tell", json!({"name": "API_KEY"})).await, FROM_ENV);
    assert_eq!(answer("tell", json!({"name": "TOKEN"})).await, FROM_FILE);
    assert_eq!(answer("env", json!({"name": "TOKEN"})).await, FROM_FILE);

    // A crash's last words are Warden's message about the call: redacted.
    let crashed = server.call("tell_and_crash", json!({"name": "TOKEN"})).await;
    assert!(is_error(&crashed), "{crashed:?}");
    let crashed = text(&crashed);
    assert!(crashed.contains("it printed: TOKEN is [redacted]"), "{crashed}");
    assert_no_secret("the crash message", &crashed);

    // A host the plugin chose is named in the refusal it is logged and audited
    // with. The plugin's own error answer repeats it: answers are not redacted.
    let fetched = server
        .call("fetch", json!({"url": format!("http://{FROM_FILE}.example.com/")}))
        .await;
    assert!(is_error(&fetched), "{fetched:?}");
    assert!(
        text(&fetched).contains(&format!("network access to {FROM_FILE}.example.com:80 is not granted")),
        "{fetched:?}"
    );

    // The client's log notifications carry the plugin's host.log text, redacted.
    let messages = server.recorder.take_at_least("notifications/message", 2).await;
    let messages: Vec<&Value> = messages.iter().map(|m| &m["data"]).collect();
    assert_eq!(
        messages,
        [&json!("API_KEY is [redacted]"), &json!("TOKEN is [redacted]")],
        "the client's log notifications"
    );

    let log = server.stop().await;
    assert_no_secret("the server log", &log);
    for expected in [
        "API_KEY is [redacted]",
        "stdout: TOKEN is [redacted]",
        "stderr: API_KEY is [redacted]",
        "api-key = [redacted]",
        "about to crash: TOKEN is [redacted]",
        "denied: network access to [redacted].example.com:80 is not granted",
    ] {
        assert!(log.contains(expected), "the server log has no {expected:?}:\n{log}");
    }

    let records = std::fs::read_to_string(&audit).unwrap();
    assert_no_secret("the audit log", &records);
    let records: Vec<Value> = records.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 9, "one record per call: {records:#?}");
    let crash = records.iter().find(|r| r["tool"] == "tell_and_crash").unwrap();
    assert_eq!(crash["outcome"], "trap");
    assert!(
        crash["detail"]
            .as_str()
            .unwrap()
            .contains("it printed: TOKEN is [redacted]"),
        "{crash}"
    );
    let fetch = records.iter().find(|r| r["tool"] == "fetch").unwrap();
    assert!(
        fetch["denied"][0]
            .as_str()
            .unwrap()
            .starts_with("network access to [redacted].example.com:80 is not granted; add \"[redacted].example.com\""),
        "{fetch}"
    );

    // `warden check` and `warden inspect` say where each came from.
    let (ok, report) = warden(&["check".as_ref(), dir.path().as_os_str()], true).await;
    assert!(ok, "{report}");
    assert_no_secret("warden check", &report);
    let file = file.display();
    assert!(
        report.contains(&format!(
            "config       api-base, api-key = <from env {VARIABLE}>, token = <from file {file}>"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "environment  API_KEY = <from env {VARIABLE}>, TOKEN = <from file {file}>"
        )),
        "{report}"
    );
    let (ok, report) = warden(
        &["inspect".as_ref(), dir.path().join("plain-config.wasm").as_os_str()],
        true,
    )
    .await;
    assert!(ok, "{report}");
    assert_no_secret("warden inspect", &report);
    let store = report
        .lines()
        .find(|line| line.trim_start().starts_with("wasi:config/store@"))
        .unwrap_or_else(|| panic!("no wasi:config/store import in {report}"));
    assert!(
        store.ends_with(&format!(
            "→ api-base, api-key = <from env {VARIABLE}>, token = <from file {file}>"
        )),
        "{store}"
    );
}

#[tokio::test]
async fn a_missing_variable_or_unreadable_file_refuses_the_plugin_naming_both() {
    let secrets = tempfile::tempdir().unwrap();
    let file = secret_file(secrets.path());
    let dir = plugins(&file);
    let manifest = dir.path().join("telltale.toml");

    let (ok, report) = warden(&["check".as_ref(), dir.path().join("telltale.wasm").as_os_str()], false).await;
    assert!(!ok, "{report}");
    assert!(
        report.contains(&format!(
            "invalid manifest {}: `environment.set.API_KEY` = {{ env = \"{VARIABLE}\" }}: {VARIABLE} is not set \
             in Warden's environment",
            manifest.display()
        )),
        "{report}"
    );
    assert!(report.ends_with("0 plugin(s) valid, 1 invalid\n"), "{report}");

    std::fs::remove_file(&file).unwrap();
    let (ok, report) = warden(&["check".as_ref(), dir.path().join("telltale.wasm").as_os_str()], true).await;
    assert!(!ok, "{report}");
    assert!(
        report.contains(&format!(
            "invalid manifest {}: `environment.set.TOKEN` = {{ file = \"{1}\" }}: cannot read {1}: ",
            manifest.display(),
            file.display()
        )),
        "{report}"
    );
    assert_no_secret("warden check", &report);
}

#[tokio::test]
async fn a_secret_file_is_read_again_when_the_plugin_reloads() {
    let secrets = tempfile::tempdir().unwrap();
    let file = secret_file(secrets.path());
    let dir = plugins(&file);
    let mut command = support::warden();
    command.env(VARIABLE, FROM_ENV);
    let server = support::serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &[],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    let token = || async {
        let result = server.call("get-setting", json!({"key": "token"})).await;
        text(&result)
    };
    assert_eq!(token().await, FROM_FILE);
    // The secret is rotated, then the manifest rewritten: the reload reads the new one.
    std::fs::write(&file, "rotated-secret-9e41\n").unwrap();
    let manifest = std::fs::read_to_string(dir.path().join("plain-config.toml")).unwrap();
    dir.replace("plain-config.toml", format!("{manifest}# rotated\n"));
    let deadline = std::time::Instant::now() + support::LONG_WAIT;
    loop {
        if token().await == "rotated-secret-9e41" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the rotated secret was not served; server log:\n{}",
            server.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let log = server.stop().await;
    assert!(
        !log.contains("rotated-secret-9e41") && !log.contains(FROM_FILE),
        "{log}"
    );
}
