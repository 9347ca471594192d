//! Hostile plugins against the sandbox: every attempt fails in the expected
//! way, and the next call to a healthy plugin succeeds. Network tests use
//! HTTP and TCP servers on 127.0.0.1 started by the test.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::sync::atomic::Ordering;

use serde_json::json;
use support::attacks::{allowed, audit_lines, healthy, refused};
use support::{Era, PluginDir, http_server, is_error, serve, text};

/// A hostile plugin beside a healthy one (`text`).
fn folder(manifest: &str) -> PluginDir {
    let dir = PluginDir::with(&["hostile", "text"]);
    dir.write("hostile.toml", manifest);
    dir
}

#[tokio::test]
async fn without_a_manifest_nothing_is_reachable() {
    let dir = folder("");
    let audit = dir.path().join("audit.jsonl");
    let probe = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let probe_addr = probe.local_addr().unwrap().to_string();
    let http = http_server().await;
    let server = serve(dir.path(), Era::Handshake, &["--audit-log", audit.to_str().unwrap()]).await;

    let passwd = refused(&server, "read_file", json!({"path": "/etc/passwd"})).await;
    assert!(passwd.contains("No such file or directory"), "{passwd}");
    let home = std::env::var("HOME").unwrap_or("/root".into());
    refused(&server, "list_dir", json!({"path": home})).await;
    refused(&server, "list_dir", json!({"path": "/"})).await;
    refused(
        &server,
        "write_file",
        json!({"path": "/tmp/warden-escape", "content": "x"}),
    )
    .await;
    assert!(!std::path::Path::new("/tmp/warden-escape").exists());

    let fetched = refused(
        &server,
        "fetch",
        json!({"url": format!("http://127.0.0.1:{}/hello", http.port)}),
    )
    .await;
    assert!(
        fetched.contains(&format!("network access to 127.0.0.1:{} is not granted", http.port))
            && fetched.contains("[network] allow in hostile.toml"),
        "{fetched}"
    );
    // A crash after a refusal says what was refused, not only that it crashed.
    let crashed = refused(
        &server,
        "fetch_then_panic",
        json!({"url": format!("http://127.0.0.1:{}/hello", http.port)}),
    )
    .await;
    assert!(
        crashed.contains("crashed while running")
            && crashed.contains(&format!(
                "after the sandbox refused it: network access to 127.0.0.1:{} is not granted",
                http.port
            ))
            && crashed.contains("[network] allow in hostile.toml"),
        "{crashed}"
    );
    let metadata = refused(
        &server,
        "fetch",
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
    )
    .await;
    assert!(metadata.contains("not granted"), "{metadata}");
    assert_eq!(
        http.connections.load(Ordering::SeqCst),
        0,
        "no request left the sandbox"
    );

    let connected = refused(&server, "connect", json!({"addr": probe_addr})).await;
    assert!(connected.contains("Permission denied"), "{connected}");
    refused(&server, "udp", json!({"addr": probe_addr})).await;
    refused(&server, "resolve", json!({"host": "localhost"})).await;

    let secret = refused(&server, "env", json!({"name": "HOME"})).await;
    assert_eq!(secret, "HOME is not set");
    assert_eq!(allowed(&server, "env_all", json!({})).await, "");
    assert_eq!(allowed(&server, "args", json!({})).await, "");
    assert_eq!(allowed(&server, "stdin", json!({})).await, "read 0 bytes");
    // Clocks and randomness are allowed.
    let clock: u64 = allowed(&server, "clock", json!({})).await.parse().unwrap();
    assert!(clock > 1_700_000_000);
    assert_eq!(allowed(&server, "random", json!({})).await.len(), 32);

    let log = server.stop().await;
    assert!(log.contains("denied: network access to 127.0.0.1"), "{log}");
    // Without a socket grant no socket is even created, so there is no address to refuse.
    assert!(!log.contains("denied: socket access"), "{log}");
    let lines = audit_lines(&audit);
    let fetch_line = lines.iter().find(|l| l["tool"] == "fetch").unwrap();
    assert!(
        fetch_line["denied"][0].as_str().unwrap().contains("is not granted"),
        "{fetch_line}"
    );
    let connect_line = lines.iter().find(|l| l["tool"] == "connect").unwrap();
    assert_eq!(connect_line["outcome"], "tool-error", "{connect_line}");
}

#[tokio::test]
async fn mounts_confine_the_plugin_to_what_was_granted() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("inside.txt"), "inside").unwrap();
    std::os::unix::fs::symlink("/etc", data.path().join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", data.path().join("passwd-link")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    let dir = folder(&format!(
        "[filesystem]\n\"{}\" = {{ mount = \"/data\", access = \"read-only\" }}\n\"{}\" = {{ mount = \"/rw\", access = \"read-write\" }}\n",
        data.path().display(),
        scratch.path().display()
    ));
    for era in [Era::Handshake, Era::Stateless] {
        let server = serve(dir.path(), era, &[]).await;
        assert_eq!(
            allowed(&server, "read_file", json!({"path": "/data/inside.txt"})).await,
            "inside"
        );
        assert_eq!(
            allowed(&server, "list_dir", json!({"path": "/data"})).await,
            "escape\ninside.txt\npasswd-link"
        );

        // Read-only means read-only.
        refused(&server, "write_file", json!({"path": "/data/new.txt", "content": "x"})).await;
        refused(
            &server,
            "write_file",
            json!({"path": "/data/inside.txt", "content": "x"}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(data.path().join("inside.txt")).unwrap(),
            "inside"
        );

        // `..`, absolute paths and planted symlinks do not lead out.
        refused(&server, "read_file", json!({"path": "/data/../etc/passwd"})).await;
        refused(&server, "read_file", json!({"path": "/rw/../../etc/passwd"})).await;
        let dots = format!("/data/../../../../{}", outside.path().join("secret.txt").display());
        refused(&server, "read_file", json!({"path": dots})).await;
        refused(&server, "read_file", json!({"path": "/data/escape/passwd"})).await;
        refused(&server, "read_file", json!({"path": "/data/passwd-link"})).await;

        // Writes land in the read-write mount, and only there.
        assert_eq!(
            allowed(
                &server,
                "write_file",
                json!({"path": "/rw/note.txt", "content": "kept"})
            )
            .await,
            "written"
        );
        assert_eq!(
            std::fs::read_to_string(scratch.path().join("note.txt")).unwrap(),
            "kept"
        );

        // A symlink the plugin plants in its writable mount still cannot lead out.
        let _ = server
            .call("symlink", json!({"target": "/etc/passwd", "link": "/rw/abs-link"}))
            .await;
        refused(&server, "read_file", json!({"path": "/rw/abs-link"})).await;
        let _ = server
            .call(
                "symlink",
                json!({"target": "../../../../../../etc/passwd", "link": "/rw/rel-link"}),
            )
            .await;
        refused(&server, "read_file", json!({"path": "/rw/rel-link"})).await;
        // Nor can a hard link to a file outside the mounts be made.
        refused(
            &server,
            "hard_link",
            json!({"existing": "/etc/passwd", "new": "/rw/hard"}),
        )
        .await;
        refused(
            &server,
            "hard_link",
            json!({"existing": "/data/../../etc/passwd", "new": "/rw/hard"}),
        )
        .await;
        assert!(!scratch.path().join("hard").exists());
        for entry in ["abs-link", "rel-link", "note.txt"] {
            let _ = std::fs::remove_file(scratch.path().join(entry));
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn http_grants_allow_exactly_the_listed_hosts() {
    let http = http_server().await;
    let port = http.port;

    // A listed *name* that resolves to a private address is refused, before connecting.
    let by_name_only = folder(&format!("[network]\nallow = [\"localhost:{port}\"]\n"));
    let server = serve(by_name_only.path(), Era::Stateless, &[]).await;
    let by_name = refused(
        &server,
        "fetch",
        json!({"url": format!("http://localhost:{port}/hello")}),
    )
    .await;
    assert!(
        by_name.contains("resolves to 127.0.0.1") || by_name.contains("resolves to ::1"),
        "{by_name}"
    );
    assert!(by_name.contains("only an exact IP entry"), "{by_name}");
    // The name is granted already: the fix is the address beside it, not instead of it.
    assert!(
        by_name.contains(", beside \"localhost\", in [network] allow"),
        "{by_name}"
    );
    // The plugin reports the failure in its own words; Warden says what was refused.
    assert!(
        by_name.contains("\n\nWarden: the sandbox refused an access during this call: network access to localhost"),
        "{by_name}"
    );
    assert_eq!(http.connections.load(Ordering::SeqCst), 0, "refused before connecting");
    server.stop().await;

    let dir = folder(&format!(
        "[network]\nallow = [\"127.0.0.1:{port}\", \"127.0.0.1:1\"]\nmax-response = \"1 KiB\"\n"
    ));
    let server = serve(dir.path(), Era::Stateless, &[]).await;
    let hello = allowed(
        &server,
        "fetch",
        json!({"url": format!("http://127.0.0.1:{port}/hello")}),
    )
    .await;
    assert_eq!(hello, "status 200\nhello");
    assert_eq!(http.connections.load(Ordering::SeqCst), 1);

    // Another port, another host: not listed.
    let other_port = refused(
        &server,
        "fetch",
        json!({"url": format!("http://127.0.0.1:{}/hello", port + 1)}),
    )
    .await;
    assert!(other_port.contains("is not granted"), "{other_port}");
    refused(
        &server,
        "fetch",
        json!({"url": "http://169.254.169.254/latest/meta-data/"}),
    )
    .await;
    refused(&server, "fetch", json!({"url": "http://example.com/"})).await;
    assert_eq!(http.connections.load(Ordering::SeqCst), 1);

    // The response cap applies.
    let big = refused(&server, "fetch", json!({"url": format!("http://127.0.0.1:{port}/big")})).await;
    assert!(big.contains("body size exceeds limit: 1024 bytes"), "{big}");

    // A listed address with nothing listening is an ordinary connection error.
    let closed = refused(&server, "fetch", json!({"url": "http://127.0.0.1:1/"})).await;
    assert!(closed.contains("ConnectionRefused"), "{closed}");
    // Nothing was refused there: no word from Warden.
    assert!(!closed.contains("Warden: the sandbox refused"), "{closed}");
    server.stop().await;

    // `localhost` not granted at all: the fix names the name and its address at once.
    let nothing = folder("");
    let server = serve(nothing.path(), Era::Stateless, &[]).await;
    let localhost = refused(&server, "fetch", json!({"url": format!("http://localhost:{port}/")})).await;
    assert!(
        localhost.contains(&format!(
            "add \"localhost:{port}\" and, as it is a loopback, the exact address it resolves to \
             (\"127.0.0.1:{port}\") to [network] allow in hostile.toml"
        )),
        "{localhost}"
    );
    server.stop().await;
}

#[tokio::test]
async fn socket_and_environment_grants_are_exact() {
    let granted = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let granted_addr = granted.local_addr().unwrap();
    tokio::spawn(async move { while granted.accept().await.is_ok() {} });
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other_addr = other.local_addr().unwrap();
    let dir = folder(&format!(
        "[network]\ntcp = [\"{granted_addr}\"]\n[environment]\npass = [\"WARDEN_TEST_SECRET\"]\nset = {{ GREETING = \"hi\" }}\n"
    ));
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut command = support::warden();
    command
        .env("WARDEN_TEST_SECRET", "s3cret")
        .env("WARDEN_NOT_PASSED", "hidden");
    let server = support::serve_command(command, dir.path(), Era::Handshake, &[], stderr).await;
    assert_eq!(
        allowed(&server, "connect", json!({"addr": granted_addr.to_string()})).await,
        "connected"
    );
    refused(&server, "connect", json!({"addr": other_addr.to_string()})).await;
    assert_eq!(
        allowed(&server, "env_all", json!({})).await,
        "GREETING=hi\nWARDEN_TEST_SECRET=s3cret"
    );
    assert_eq!(
        refused(&server, "env", json!({"name": "WARDEN_NOT_PASSED"})).await,
        "WARDEN_NOT_PASSED is not set"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_endless_loop_ends_at_the_time_limit() {
    let dir = folder("[limits]\ntimeout = \"2s\"\n");
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let started = std::time::Instant::now();
    let spun = refused(&server, "spin", json!({})).await;
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
    assert!(
        spun.contains("exceeded its 2s time limit") && spun.contains("`[limits] timeout` in hostile.toml"),
        "{spun}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_fuel_budget_stops_computation_deterministically() {
    let dir = folder("[limits]\nfuel = 5000000\n");
    let audit = dir.path().join("audit.jsonl");
    let server = serve(dir.path(), Era::Handshake, &["--audit-log", audit.to_str().unwrap()]).await;
    let spun = refused(&server, "spin", json!({})).await;
    assert_eq!(
        spun,
        "plugin `hostile` used up its fuel (5000000 units) while running `spin`; \
         the operator can raise `[limits] fuel` in hostile.toml"
    );
    // Ordinary work fits in the budget.
    assert_eq!(allowed(&server, "recurse", json!({"depth": 100})).await, "100");
    assert_eq!(allowed(&server, "recurse", json!({"depth": 100})).await, "100");
    assert_eq!(allowed(&server, "recurse", json!({"depth": 10})).await, "10");
    server.stop().await;

    // The audit log says what each call used: all of the budget, then the
    // same for the same work (a fresh sandbox each time) but for the start
    // code of an instantiation on the call's path, which a sandbox made ahead
    // ran before its call (a unit or so here), and less for less.
    let used: Vec<(String, u64)> = audit_lines(&audit)
        .iter()
        .filter(|line| line["plugin"] == "hostile")
        .map(|line| {
            let fuel = line["timing"]["fuel_used"].as_u64();
            (line["outcome"].as_str().unwrap().to_string(), fuel.expect("fuel_used"))
        })
        .collect();
    let outcomes: Vec<&str> = used.iter().map(|(outcome, _)| outcome.as_str()).collect();
    assert_eq!(outcomes, ["fuel-limit", "ok", "ok", "ok"], "{used:?}");
    assert_eq!(used[0].1, 5_000_000);
    assert!(used[1].1 > 0 && used[1].1 < 5_000_000, "{used:?}");
    assert!(
        used[1].1.abs_diff(used[2].1) <= 16,
        "the same work, the same fuel: {used:?}"
    );
    assert!(used[3].1 < used[1].1, "{used:?}");
}

#[tokio::test]
async fn every_limit_ends_only_the_call_that_hit_it() {
    let dir = folder("[limits]\nmemory = \"256 MiB\"\noutput = \"1 MiB\"\n");
    let audit = dir.path().join("audit.jsonl");
    let server = serve(dir.path(), Era::Handshake, &["--audit-log", audit.to_str().unwrap()]).await;

    let allocated = refused(&server, "alloc", json!({"megabytes": 100_000})).await;
    assert!(
        allocated.contains("exceeded its 256 MiB memory limit") && allocated.contains("`[limits] memory`"),
        "{allocated}"
    );
    assert_eq!(
        allowed(&server, "alloc", json!({"megabytes": 8})).await,
        "allocated 8 MiB"
    );

    let recursed = refused(&server, "recurse", json!({"depth": 100_000_000})).await;
    assert!(recursed.contains("overflowed its stack"), "{recursed}");

    // 100 MB is refused before it is read: the most one crossing may hand over
    // is 64 × the output limit.
    let big = refused(&server, "big_result", json!({"megabytes": 100})).await;
    assert_eq!(
        big,
        "plugin `hostile` handed Warden more data than it reads in one go (64 MiB) while running \
         `big_result`, far beyond its output limit of 1 MiB; the operator can raise `[limits] output` \
         in hostile.toml"
    );
    // Within that, the output limit decides.
    let big = refused(&server, "big_result", json!({"megabytes": 2})).await;
    assert!(
        big.contains("returned 2097184 bytes")
            && big.contains("output limit of 1 MiB")
            && big.contains("`[limits] output`"),
        "{big}"
    );

    assert_eq!(
        allowed(&server, "flood_stdout", json!({"megabytes": 100})).await,
        "flooded"
    );

    let panicked = refused(&server, "panic", json!({})).await;
    assert!(
        panicked.contains("crashed") && panicked.contains("hostile panic"),
        "{panicked}"
    );

    let log = server.stop().await;
    assert!(
        log.contains("dropped_bytes"),
        "stdout beyond the cap is counted, not kept"
    );
    assert!(
        log.len() < 2 << 20,
        "100 MB of stdout must not reach the log ({} bytes)",
        log.len()
    );
    let outcomes: Vec<String> = audit_lines(&audit)
        .iter()
        .filter(|l| l["plugin"] == "hostile")
        .map(|l| l["outcome"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        outcomes,
        [
            "memory-limit",
            "ok",
            "trap",
            "output-limit",
            "output-limit",
            "ok",
            "trap"
        ]
    );
    // No budget, no fuel counted.
    assert!(
        audit_lines(&audit)
            .iter()
            .all(|line| line["timing"].get("fuel_used").is_none()),
        "fuel_used is only for plugins with `[limits] fuel`"
    );
}

#[tokio::test]
async fn excess_concurrent_calls_get_a_busy_error() {
    let dir = folder("[limits]\ntimeout = \"4s\"\nconcurrency = 1\n");
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let first = server.call("spin", json!({}));
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        server.call("clock", json!({})).await
    };
    let (first, second) = tokio::join!(first, second);
    assert!(text(&first).contains("time limit"), "{first:?}");
    assert!(is_error(&second));
    assert!(
        text(&second).contains("plugin `hostile` is busy: 1 calls are already running")
            && text(&second).contains("`[limits] concurrency` in hostile.toml"),
        "{second:?}"
    );
    // Once the slot is free, calls run again.
    let clock = server.call("clock", json!({})).await;
    assert!(!is_error(&clock));
    healthy(&server).await;
    server.stop().await;
}
