//! Warden's own files on a full disk (issue 28): the compiled-code cache
//! (plugins are compiled in memory and served, and the failure is said once,
//! not once per plugin) and the server's log (stderr). And the operator's
//! files named on the command line, read through the one opener
//! (`bounded_file`): a FIFO in their place is refused at once, named.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::Path;
use std::time::Duration;

use support::{Era, PluginDir, namespaces, serve_command};

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
}

/// Runs `warden ARGS` with nothing on stdin; fails the test if it waits (on
/// a FIFO with no writer) or succeeds; returns what it said on stderr.
async fn refused_at_once(args: &[&std::ffi::OsStr]) -> String {
    let ran = support::warden().args(args).stdin(std::process::Stdio::null()).output();
    let output = tokio::time::timeout(Duration::from_secs(60), ran)
        .await
        .unwrap_or_else(|_| panic!("`warden {args:?}` waited on a FIFO"))
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{said}");
    said
}

#[tokio::test]
async fn fifos_where_the_command_line_names_a_file_are_refused_without_waiting() {
    let dir = PluginDir::with(&["text"]);
    let files = tempfile::tempdir().unwrap();
    let at = |name: &str| files.path().join(name);
    let not_regular = |what: &str, name: &str| format!("{what} {} is not a regular file", at(name).display());

    // The trust policy, and a signer's key it names (`warden check`, as `serve` and `pull`).
    mkfifo(&at("trust.toml"));
    let said = refused_at_once(&[
        "check".as_ref(),
        "--plugins".as_ref(),
        dir.path().as_os_str(),
        "--trust".as_ref(),
        at("trust.toml").as_os_str(),
    ])
    .await;
    assert!(said.contains(&not_regular("the file", "trust.toml")), "{said}");
    std::fs::write(
        at("keyed.toml"),
        "[[repository]]\nmatch = \"r.io/a/*\"\n[[repository.signer]]\nname = \"k\"\nkey = \"k.pub\"\n",
    )
    .unwrap();
    mkfifo(&at("k.pub"));
    let said = refused_at_once(&[
        "check".as_ref(),
        "--plugins".as_ref(),
        dir.path().as_os_str(),
        "--trust".as_ref(),
        at("keyed.toml").as_os_str(),
    ])
    .await;
    assert!(said.contains(&not_regular("the file", "k.pub")), "{said}");
    assert!(said.contains("`repository[0].signer[0].key`"), "{said}");

    // The component `warden embed-docs` documents.
    mkfifo(&at("component.wasm"));
    let said = refused_at_once(&[
        "embed-docs".as_ref(),
        at("component.wasm").as_os_str(),
        "--wit".as_ref(),
        files.path().as_os_str(),
    ])
    .await;
    assert!(said.contains(&not_regular("the component", "component.wasm")), "{said}");

    // The HTTP bearer token (`--token-file`), read before anything loads.
    mkfifo(&at("token"));
    let said = refused_at_once(&[
        "serve".as_ref(),
        "--plugins".as_ref(),
        dir.path().as_os_str(),
        "--http".as_ref(),
        "127.0.0.1:0".as_ref(),
        "--token-file".as_ref(),
        at("token").as_os_str(),
    ])
    .await;
    assert!(said.contains(&not_regular("the token file", "token")), "{said}");

    // A project file `warden build` reads to name the plugin.
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("app.py"), "").unwrap();
    mkfifo(&project.path().join("pyproject.toml"));
    let said = refused_at_once(&["build".as_ref(), project.path().as_os_str()]).await;
    assert!(said.contains("pyproject.toml is not a regular file"), "{said}");
}

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
