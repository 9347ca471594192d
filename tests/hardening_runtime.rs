//! A plugin against what the host spends on its behalf outside its linear
//! memory and its timer: OS handles, host-side tables and memory, the server
//! log, the client's stream, the audit trail, and pooled memory between
//! calls. Each attack comes from the `greedy` test plugin and is followed by
//! a call to a healthy plugin (`text`), which must still work; where the
//! attack would cost the host something, the cost is measured on the real
//! `warden` process (descriptors, peak RSS, log bytes) and bounded.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves
#![allow(deprecated)] // logging/setLevel: deprecated in rmcp, still on the 2025-11-25 wire

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, LoggingLevel, ReadResourceRequestParams, Reference,
    SetLevelRequestParams,
};
use rmcp::{ErrorData, ServiceError};
use serde_json::{Value, json};
use support::attacks::{self, audit_lines, healthy, refused};
use support::{Era, PluginDir, Server, open_fds, serve, serve_command, status_kib, text, warden};

/// The greedy plugin (with `manifest`) beside a healthy one.
fn folder(manifest: &str) -> PluginDir {
    let dir = PluginDir::with(&["greedy", "text"]);
    dir.write("greedy.toml", manifest);
    dir
}

/// An attack that the plugin survives: it works, and so does the healthy plugin.
async fn allowed(server: &Server, tool: &str, arguments: Value) -> String {
    let text = attacks::allowed(server, tool, arguments).await;
    healthy(server).await;
    text
}

fn mcp_error(result: Result<impl std::fmt::Debug, ServiceError>) -> ErrorData {
    match result {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// A socket grant to a local port nothing listens on: sockets can be
/// created, and every connect would be refused by the peer.
const SOCKET_GRANT: &str = "[network]\ntcp = [\"127.0.0.1:9\"]\nudp = [\"127.0.0.1:9\"]\n";

#[tokio::test]
async fn a_plugin_without_a_socket_grant_opens_no_socket() {
    let dir = folder("");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let before = open_fds(server.pid);
    for kind in ["tcp", "udp"] {
        let held = allowed(&server, "hoard_sockets", json!({"count": 100_000, "kind": kind})).await;
        assert!(held.starts_with("held 0 sockets, then: "), "{kind}: {held}");
        assert!(held.to_lowercase().contains("access"), "{kind}: {held}");
    }
    let after = open_fds(server.pid);
    assert!(after <= before + 2, "descriptors went from {before} to {after}");
    server.stop().await;
}

#[tokio::test]
async fn a_call_holds_at_most_its_handles() {
    let dir = folder(&format!("{SOCKET_GRANT}[limits]\nhandles = 64\n"));
    let audit = dir.path().join("audit.jsonl");
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    let before = open_fds(server.pid);
    for kind in ["tcp", "udp"] {
        let error = refused(&server, "hoard_sockets", json!({"count": 100_000, "kind": kind})).await;
        assert!(
            error.contains("tried to hold more than 64 handles")
                && error.contains("can raise `[limits] handles` in greedy.toml"),
            "{error}"
        );
        let lines = audit_lines(&audit);
        let last = lines.iter().rev().find(|l| l["plugin"] == "greedy").unwrap();
        assert_eq!(last["outcome"], "handle-limit", "{last}");
    }
    let after = open_fds(server.pid);
    assert!(after <= before + 2, "descriptors went from {before} to {after}");
    // Within its handles, the same plugin works.
    assert_eq!(
        allowed(&server, "hoard_sockets", json!({"count": 40})).await,
        "held 40 sockets"
    );
    server.stop().await;
}

#[tokio::test]
async fn calls_together_never_hold_more_descriptors_than_the_process_may_open() {
    // 600 descriptors for the whole process: 256 are kept for the server,
    // so calls may hold 344 handles together, and at 128 handles each only
    // two run at once. Eight calls that each hold 110 sockets for 300 ms
    // would need 880.
    const LIMIT: u64 = 600;
    let mut command = warden();
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let dir = folder(&format!("{SOCKET_GRANT}[limits]\nhandles = 128\n"));
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let server = serve_command(command, dir.path(), Era::Handshake, &["--no-watch"], stderr).await;
    let pid = server.pid;
    let baseline = open_fds(pid);
    let peak = Arc::new(AtomicUsize::new(baseline));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = std::thread::spawn({
        let (peak, done) = (peak.clone(), done.clone());
        move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(open_fds(pid), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    });
    let call = || server.call("hoard_sockets", json!({"count": 110, "hold_ms": 300}));
    let (a, b, c, d, e, f, g, h) = tokio::join!(call(), call(), call(), call(), call(), call(), call(), call());
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    for result in [a, b, c, d, e, f, g, h] {
        assert_eq!(text(&result), "held 110 sockets", "{result:?}");
    }
    let peak = peak.load(Ordering::Relaxed);
    eprintln!("descriptors: baseline {baseline}, peak {peak} (limit {LIMIT})");
    assert!(
        peak <= baseline + 2 * 128 + 8 && (peak as u64) < LIMIT,
        "at most two calls' handles at once: baseline {baseline}, peak {peak}"
    );
    assert!(peak >= baseline + 110, "the calls did hold their sockets (peak {peak})");
    healthy(&server).await;
    let log = server.stop().await;
    assert!(!log.contains("Too many open files"), "{log}");
}

#[tokio::test]
async fn header_collections_cannot_fill_the_hosts_memory() {
    // wasi:http header collections need no grant: each is host memory.
    let dir = folder("");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let before = status_kib(server.pid, "VmHWM");
    // 100 000 collections of 40 KiB would be 4 GB; a call holds 256.
    let error = refused(&server, "hoard_headers", json!({"count": 100_000, "kilobytes": 40})).await;
    assert!(error.contains("more than 256 handles"), "{error}");
    // One collection holds at most 64 KiB.
    let error = refused(&server, "hoard_headers", json!({"count": 1, "kilobytes": 100})).await;
    assert!(error.contains("grew an HTTP header collection past 64 KiB"), "{error}");
    let grown = status_kib(server.pid, "VmHWM").saturating_sub(before);
    eprintln!("peak RSS: {before} KiB before, grew by {grown} KiB");
    assert!(grown < 100 << 10, "peak RSS grew by {grown} KiB");
    server.stop().await;
}

#[tokio::test]
async fn log_and_progress_floods_stay_within_the_calls_budget() {
    let dir = folder("");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    server
        .client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    let logged_before = server.log().len();
    assert_eq!(
        allowed(&server, "log_flood", json!({"count": 100_000, "bytes": 1000})).await,
        "logged"
    );
    // 64 KiB of log-output at 1000 bytes (+ 32 of overhead) a message: 63.
    server.wait_for_log("dropped 99937 log and progress messages").await;
    let messages = server.recorder.take_at_least("notifications/message", 63).await;
    assert_eq!(messages.len(), 63, "the client got the messages within the budget");
    assert_eq!(
        allowed(&server, "progress_flood", json!({"count": 100_000, "bytes": 100})).await,
        "reported"
    );
    // At 100 bytes (+ 32) a message: 496 within the budget.
    server.wait_for_log("dropped 99504 log and progress messages").await;
    let grown = server.log().len() - logged_before;
    eprintln!("the server log grew by {grown} bytes for 200 000 messages");
    assert!(grown < 200 << 10, "the server log grew by {grown} bytes");
    server.stop().await;
}

#[tokio::test]
async fn plugin_text_cannot_forge_lines_of_the_server_log() {
    let dir = folder("");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    assert_eq!(allowed(&server, "forge_log", json!({})).await, "forged");
    let log = server.stop().await;
    assert!(
        !log.lines().any(|line| line.starts_with("2026-11-30T21:00:00.000000Z")),
        "a plugin forged a line:\n{log}"
    );
    assert!(!log.contains(['\r', '\u{1b}']), "{log:?}");
    // Both the host.log message and the captured stderr, escaped in place.
    let escaped = "fine\\n2026-11-30T21:00:00.000000Z  WARN warden: plugin `notes` was granted";
    assert_eq!(log.matches(escaped).count(), 2, "{log}");
}

#[tokio::test]
async fn every_answer_is_held_to_the_output_limit() {
    let dir = folder("");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let over = "more than its output limit of 1 MiB";
    for (tool, arguments) in [
        ("huge_error", json!({"megabytes": 4})),
        ("many_items", json!({"count": 500_000})),
        ("big_link", json!({"megabytes": 4})),
    ] {
        let error = refused(&server, tool, arguments).await;
        assert!(error.contains(over) && error.len() < 1000, "{tool}: {error}");
    }
    for uri in ["greedy://huge-error", "greedy://many", "greedy://big"] {
        let error = mcp_error(server.client.read_resource(ReadResourceRequestParams::new(uri)).await);
        assert!(error.message.contains(over), "{uri}: {}", error.message);
        healthy(&server).await;
    }
    for mode in ["error", "link"] {
        let mut arguments = serde_json::Map::new();
        arguments.insert("mode".into(), json!(mode));
        let error = mcp_error(
            server
                .client
                .get_prompt(GetPromptRequestParams::new("greedy").with_arguments(arguments))
                .await,
        );
        assert!(error.message.contains(over), "{mode}: {}", error.message);
        healthy(&server).await;
    }
    let complete = |value: &str| {
        server.client.complete(CompleteRequestParams::new(
            Reference::for_prompt("greedy"),
            ArgumentInfo::new("mode", value),
        ))
    };
    let error = mcp_error(complete("big").await);
    assert!(error.message.contains(over), "{}", error.message);
    let many = complete("many").await.unwrap();
    assert_eq!(many.completion.values.len(), 100);
    assert_eq!(many.completion.total, Some(1_000_000));
    assert_eq!(many.completion.has_more, Some(true));
    healthy(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn every_invocation_is_audited_with_what_was_refused() {
    let dir = folder("");
    let audit = dir.path().join("audit.jsonl");
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    let logged_before = server.log().len();
    assert_eq!(
        allowed(&server, "deny_flood", json!({"count": 20_000})).await,
        "refused 20000 of 20000"
    );
    let read = server
        .client
        .read_resource(ReadResourceRequestParams::new("greedy://denied"))
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    let mut arguments = serde_json::Map::new();
    arguments.insert("mode".into(), json!("error"));
    mcp_error(
        server
            .client
            .get_prompt(GetPromptRequestParams::new("greedy").with_arguments(arguments))
            .await,
    );
    server
        .client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("greedy"),
            ArgumentInfo::new("mode", "many"),
        ))
        .await
        .unwrap();
    let log = server.stop().await;
    let lines = audit_lines(&audit);
    let of = |kind: &str, target: &str| {
        lines
            .iter()
            .find(|l| l["kind"] == kind && l["target"] == target)
            .unwrap_or_else(|| panic!("no {kind} record for {target}: {lines:?}"))
            .clone()
    };
    let flood = of("tool-call", "deny_flood");
    assert_eq!(flood["outcome"], "ok");
    let denied = flood["denied"].as_array().unwrap();
    assert_eq!(denied.len(), 17, "{denied:?}");
    assert!(denied[0].as_str().unwrap().contains("not-granted.example"));
    assert_eq!(denied[16], "… and 19984 more refused accesses in this call");
    let read = of("resource-read", "greedy://denied");
    assert_eq!(
        (read["outcome"].as_str(), read["denied"].as_array().map(Vec::len)),
        (Some("ok"), Some(3))
    );
    assert_eq!(of("prompt-get", "greedy")["outcome"], "output-limit");
    assert_eq!(of("completion", "greedy")["outcome"], "ok");
    // The log names only the refusals that were kept.
    let denial_lines = log[logged_before..].matches("denied: ").count();
    assert_eq!(denial_lines, 17 + 3, "{log}");
}

#[tokio::test]
async fn nothing_a_call_leaves_in_memory_reaches_the_next_on_the_fast_reset() {
    // The operator's opt-in fast reset (the default decommits: tests/stdio.rs).
    let mut command = warden();
    command.env("WARDEN_MEMORY_RESET", "dirty-pages");
    let dir = PluginDir::with(&["misbehave"]);
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let server = serve_command(command, dir.path(), Era::Handshake, &["--no-watch", "-v"], stderr).await;
    support::attacks::assert_calls_remember_nothing(&server).await;
    let log = server.stop().await;
    assert!(
        log.contains("WARDEN_MEMORY_RESET=dirty-pages: pooled memory is reset by rewriting")
            || log.contains("WARDEN_MEMORY_RESET=dirty-pages is refused on a host with swap"),
        "{log}"
    );
}
