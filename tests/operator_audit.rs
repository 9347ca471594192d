//! The audit log under what operators and disks do to it (issue 28):
//! rotated the logrotate way (rename, then SIGHUP) or removed; on a full
//! disk, where calls are served and the lost records counted and said once,
//! or, with `--audit-required`, refused until a record can be written again.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Era, PluginDir, namespaces, serve, serve_command, text};

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
        .collect()
}

/// How many ended `slugify` calls `path` records.
fn calls_in(path: &Path) -> usize {
    records(path)
        .iter()
        .filter(|r| r["target"] == "slugify" && r.get("outcome").is_some())
        .count()
}

/// Runs `step` until it answers, for up to 30 s.
async fn eventually(what: &str, mut step: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !step().await {
        assert!(Instant::now() < deadline, "no {what} within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn slugify(server: &support::Server, words: &str) {
    let result = server.call("slugify", json!({ "text": words })).await;
    assert_eq!(text(&result), words.to_lowercase().replace(' ', "-"));
}

fn hangup(pid: u32) {
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGHUP) }, 0);
}

#[tokio::test]
async fn a_rotated_audit_log_is_opened_again_at_its_path() {
    let dir = PluginDir::with(&["text"]);
    let logs = tempfile::tempdir().unwrap();
    let audit = logs.path().join("audit.jsonl");
    let rotated = logs.path().join("audit.jsonl.1");
    let server = serve(dir.path(), Era::Handshake, &["--audit-log", audit.to_str().unwrap()]).await;
    slugify(&server, "One").await;

    // logrotate: rename, then SIGHUP. The server lives on and writes anew.
    std::fs::rename(&audit, &rotated).unwrap();
    hangup(server.pid);
    server.wait_for_log("audit log: opened").await;
    slugify(&server, "Two Two").await;
    assert_eq!(calls_in(&rotated), 1, "the call before the rotation");
    assert_eq!(calls_in(&audit), 1, "the call after it");
    assert!(
        server.log().contains("SIGHUP: reopening the audit log"),
        "{}",
        server.log()
    );

    // Removed, and no SIGHUP: found at the next record a second on.
    std::fs::remove_file(&audit).unwrap();
    // Each call's record is what notices the removal.
    eventually("new audit log at the path", async || {
        slugify(&server, "Three").await;
        audit.exists()
    })
    .await;
    assert_eq!(calls_in(&audit), 1, "{:?}", records(&audit));
    server.stop().await;
}

#[tokio::test]
async fn an_audit_log_on_a_full_disk_is_counted_and_said_once() {
    let dir = PluginDir::with(&["text"]);
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--audit-log", "/dev/full", "--metrics", "127.0.0.1:0"],
    )
    .await;
    for n in 0..20 {
        slugify(&server, &format!("Call {n}")).await;
    }
    let log = server.log();
    let said: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("cannot write the audit log /dev/full"))
        .collect();
    assert_eq!(said.len(), 1, "said once, not once per call:\n{log}");
    assert!(said[0].contains("serving on"), "{}", said[0]);
    let at = log.find("serving metrics at ").expect("the metrics address");
    let url = log[at + "serving metrics at ".len()..]
        .split_whitespace()
        .next()
        .unwrap();
    let body = reqwest::get(url).await.unwrap().text().await.unwrap();
    assert!(
        body.lines().any(|l| l == "warden_audit_write_failures_total 20"),
        "{body}"
    );
    assert!(
        body.lines()
            .any(|l| l == r#"warden_calls_total{kind="tool-call",plugin="text",target="slugify",outcome="ok"} 20"#),
        "{body}"
    );
    server.stop().await;
}

#[tokio::test]
async fn audit_required_refuses_calls_while_the_disk_is_full_and_serves_once_it_is_not() {
    if !namespaces::can_unshare(&["-m", "--propagation", "private"]) {
        eprintln!("skipped: this machine allows no mount namespace to mount a small tmpfs in");
        return;
    }
    let dir = PluginDir::with(&["text"]);
    let logs = tempfile::tempdir().unwrap();
    let command = namespaces::warden_in(
        &["-m", "--propagation", "private"],
        &format!("mount -t tmpfs -o size=64k tmpfs {}", logs.path().display()),
    );
    let audit = logs.path().join("audit.jsonl");
    let server = serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &["--audit-log", audit.to_str().unwrap(), "--audit-required"],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    slugify(&server, "Before").await;

    // The tmpfs is the server's; the test reaches it through /proc.
    let inside = Path::new("/proc")
        .join(server.pid.to_string())
        .join("root")
        .join(logs.path().strip_prefix("/").unwrap());
    let audit_inside = inside.join("audit.jsonl");
    let filler = inside.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let block = vec![0u8; 4096];
    while std::io::Write::write_all(&mut file, &block).is_ok() {}
    drop(file);

    // What is left of the audit file's last page takes a few more records;
    // then every call is refused, with the reason.
    let mut refused = None;
    for n in 0..64 {
        match server.try_call("slugify", json!({ "text": format!("Full {n}") })).await {
            Ok(result) => assert_eq!(text(&result), format!("full-{n}")),
            Err(error) => {
                refused = Some(format!("{error:?}"));
                break;
            }
        }
    }
    let refused = refused.expect("a call refused once the disk is full");
    assert!(refused.contains("cannot write the audit log"), "{refused}");
    assert!(refused.contains("No space left on device"), "{refused}");
    assert!(refused.contains("--audit-required"), "{refused}");
    for _ in 0..3 {
        let again = server
            .try_call("slugify", json!({ "text": "Still full" }))
            .await
            .unwrap_err();
        assert!(format!("{again:?}").contains("--audit-required"), "{again:?}");
    }
    server.wait_for_log("invocations are refused until it can be").await;

    std::fs::remove_file(&filler).unwrap();
    slugify(&server, "After").await;
    server.wait_for_log("is written again").await;
    // Every line is a whole record; each call served has the record that it
    // started, and none refused ran.
    let written = records(&audit_inside);
    let started = written.iter().filter(|r| r["phase"] == "started").count();
    let ended = written.iter().filter(|r| r["outcome"] == "ok").count();
    assert!(started >= 2 && ended >= 2, "{written:?}");
    assert!(ended <= started, "no call ended unstarted: {written:?}");
    assert_eq!(written.last().unwrap()["outcome"], "ok", "the call after: {written:?}");
    server.stop().await;
}

#[tokio::test]
async fn sighup_under_load_loses_no_call() {
    let dir = PluginDir::with(&["text", "clock"]);
    let server = std::sync::Arc::new(serve(dir.path(), Era::Handshake, &[]).await);
    for round in 0..10 {
        hangup(server.pid);
        let calls: Vec<_> = (0..8)
            .map(|n| {
                let server = server.clone();
                tokio::spawn(async move { slugify(&server, &format!("Round {round} Call {n}")).await })
            })
            .collect();
        for call in calls {
            call.await.expect("every call answered rightly");
        }
        // A signal sent while the same one is still pending merges with it
        // (POSIX does not queue them), so the next round's SIGHUP waits until
        // this one was taken; the calls above still race its reload.
        server
            .wait_until_within("the SIGHUP handled", Duration::from_secs(30), || {
                (server.log().matches("SIGHUP: reopening").count() == round + 1).then_some(())
            })
            .await;
    }
    slugify(&server, "After All").await;
    std::sync::Arc::into_inner(server).unwrap().stop().await;
}

#[tokio::test]
async fn sighup_puts_a_rewritten_trust_policy_in_force() {
    let dir = PluginDir::with(&["text", "clock"]);
    let policy_dir = tempfile::tempdir().unwrap();
    let policy = policy_dir.path().join("trust.toml");
    std::fs::write(&policy, "local = [\"text\"]\n").unwrap();
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--trust", policy.to_str().unwrap(), "--require-signature"],
    )
    .await;
    let mut tools = server.tool_names().await;
    tools.sort();
    assert_eq!(tools, ["change_case", "slugify", "text_stats"]);
    assert!(server.log().contains("list `clock` under `local`"), "{}", server.log());

    // A policy that does not parse changes nothing.
    std::fs::write(&policy, "local = [\n").unwrap();
    hangup(server.pid);
    server.wait_for_log("the trust policy in force stays").await;
    slugify(&server, "Still Here").await;

    std::fs::write(&policy, "local = [\"clock\"]\n").unwrap();
    hangup(server.pid);
    server.wait_for_log("the trust policy now in force refuses it").await;
    eventually("clock served and text gone", async || {
        let mut tools = server.tool_names().await;
        tools.sort();
        tools == ["date_add", "date_diff", "now", "weekday"]
    })
    .await;
    assert!(
        server
            .log()
            .contains(&format!("trust policy {} reloaded", policy.display()))
    );
    server.stop().await;
}

#[tokio::test]
async fn a_fifo_at_the_audit_logs_path_is_refused_without_waiting() {
    let dir = PluginDir::with(&["text"]);
    let logs = tempfile::tempdir().unwrap();
    let fifo = logs.path().join("audit.jsonl");
    let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let started = support::warden()
        .arg("serve")
        .arg("--plugins")
        .arg(dir.path())
        .args(["--audit-log", fifo.to_str().unwrap(), "--audit-required"])
        .stdin(std::process::Stdio::null())
        .output();
    let output = tokio::time::timeout(Duration::from_secs(60), started)
        .await
        .expect("Warden waited on the FIFO")
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("audit.jsonl (a FIFO with no reader: Warden does not wait for one)"),
        "{said}"
    );
}

#[tokio::test]
async fn audit_required_refuses_calls_once_its_path_is_a_folder_and_serves_once_it_is_a_file() {
    let dir = PluginDir::with(&["text"]);
    let logs = tempfile::tempdir().unwrap();
    let audit = logs.path().join("audit.jsonl");
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--audit-log", audit.to_str().unwrap(), "--audit-required"],
    )
    .await;
    slugify(&server, "Before").await;
    // The operator moves the log away and a folder takes its place: the
    // open file is no longer at the path, so no record can be proven
    // written there.
    std::fs::rename(&audit, logs.path().join("audit.old")).unwrap();
    std::fs::create_dir(&audit).unwrap();
    let refused = server.try_call("slugify", json!({ "text": "Lost" })).await.unwrap_err();
    let refused = format!("{refused:?}");
    assert!(refused.contains("--audit-required"), "{refused}");
    assert!(refused.contains("no longer names the open file"), "{refused}");
    std::fs::remove_dir(&audit).unwrap();
    slugify(&server, "After").await;
    let written = records(&audit);
    assert_eq!(written.last().unwrap()["outcome"], "ok", "the call after: {written:?}");
    assert!(
        !records(&logs.path().join("audit.old"))
            .iter()
            .any(|r| r.to_string().contains("Lost")),
        "the refused call's record went to the moved file"
    );
    server.stop().await;
}
