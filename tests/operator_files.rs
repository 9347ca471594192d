//! Warden's own files on a full disk (issue 28): the compiled-code cache
//! (plugins are compiled in memory and served, and the failure is said once,
//! not once per plugin) and the server's log (stderr).

mod support;

use support::{Era, PluginDir, namespaces, serve_command};

#[tokio::test]
async fn a_full_cache_folder_compiles_in_memory_and_says_so_once() {
    if !namespaces::can_unshare(&["-m", "--propagation", "private"]) {
        eprintln!("skipped: this machine allows no mount namespace to mount a small tmpfs in");
        return;
    }
    let dir = PluginDir::with(&["text", "clock", "misbehave"]);
    let cache = tempfile::tempdir().unwrap();
    // 16 KiB: the folder opens, and no compiled component fits.
    let command = namespaces::warden_in(
        &["-m", "--propagation", "private"],
        &format!("mount -t tmpfs -o size=16k,mode=0700 tmpfs {}", cache.path().display()),
    );
    let cache_dir = cache.path().to_str().unwrap();
    let server = serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--cache-dir", cache_dir],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    assert_eq!(server.tool_names().await.len(), 3 + 4 + 12, "all three plugins serve");
    support::attacks::healthy(&server).await;
    let log = server.stop().await;
    let warned: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("cannot write the compiled-code cache entry"))
        .collect();
    assert_eq!(warned.len(), 1, "{log}");
    assert!(warned[0].contains("No space left on device"), "{}", warned[0]);
    assert!(warned[0].contains("compiling in memory"), "{}", warned[0]);
    assert!(log.contains("compiled=3 from_cache=0"), "{log}");
}

#[tokio::test]
async fn a_read_only_cache_folder_compiles_in_memory_and_says_so_once() {
    if !namespaces::can_unshare(&["-m", "--propagation", "private"]) {
        eprintln!("skipped: this machine allows no mount namespace to mount a read-only tmpfs in");
        return;
    }
    let dir = PluginDir::with(&["text", "clock"]);
    let cache = tempfile::tempdir().unwrap();
    // A read-only volume (root may write anywhere else, so a mode would not do).
    let command = namespaces::warden_in(
        &["-m", "--propagation", "private"],
        &format!("mount -t tmpfs -o ro,mode=0700 tmpfs {}", cache.path().display()),
    );
    let server = serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--cache-dir", cache.path().to_str().unwrap()],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    assert_eq!(server.tool_names().await.len(), 3 + 4, "both plugins serve");
    support::attacks::healthy(&server).await;
    let log = server.stop().await;
    let warned: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("cannot write the compiled-code cache entry"))
        .collect();
    assert_eq!(warned.len(), 1, "{log}");
    assert!(warned[0].contains("Read-only file system"), "{}", warned[0]);
    assert!(log.contains("compiled=2 from_cache=0"), "{log}");
}

#[tokio::test]
async fn a_server_log_on_a_full_disk_does_not_stop_serving() {
    // stderr on /dev/full: every log line fails to be written; calls are served.
    let dir = PluginDir::with(&["text"]);
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let mut command = support::warden();
    command.args(["serve", "-v", "--plugins"]).arg(dir.path());
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::from(full))
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport)
        .await
        .expect("the handshake works");
    for n in 0..20 {
        let result = support::call(
            &client,
            "slugify",
            serde_json::json!({"text": format!("Hello World {n}")}),
        )
        .await;
        assert_eq!(support::text(&result), format!("hello-world-{n}"));
    }
    client.cancel().await.unwrap();
}
