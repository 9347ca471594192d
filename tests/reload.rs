//! Hot reload, through rmcp's client against the real binary: plugins
//! appear, change and disappear while a client stays connected, clients are
//! told when what they see changes, and no call fails because of a reload.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ServiceError;
use rmcp::model::ErrorCode;
use serde_json::json;
use support::{ERAS, Era, PluginDir, Server, guest, is_error, serve, text};

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(guest(name)).unwrap()
}

/// A private compiled-code cache, so what a test measures is its own.
fn cache_args(dir: &Path) -> Vec<String> {
    vec!["--cache-dir".into(), dir.display().to_string()]
}

async fn serve_with_cache(dir: &PluginDir, cache: &Path, era: Era) -> Server {
    let args = cache_args(cache);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    serve(dir.path(), era, &args).await
}

async fn version(server: &Server) -> String {
    let result = server.call("version", json!({})).await;
    assert!(!is_error(&result), "{result:?}");
    text(&result)
}

#[tokio::test]
async fn a_plugin_added_while_connected_appears_with_a_notification() {
    for era in ERAS {
        let dir = PluginDir::with(&["misbehave"]);
        let server = serve(dir.path(), era, &[]).await;
        assert!(!server.tool_names().await.contains(&"version".to_string()));

        dir.replace("ver.wasm", bytes("reload-v1"));
        let seen = server.wait_for_list_change(0).await;
        assert!(server.tool_names().await.contains(&"version".to_string()), "{era:?}");
        assert_eq!(version(&server).await, "v1");

        // A folder plugin, manifest first as a deployer would.
        std::fs::create_dir(dir.path().join("folder")).unwrap();
        dir.write(
            "folder/plugin.toml",
            "[environment]\nset = { TOOL_PREFIX = \"folder\" }\n",
        );
        dir.replace("folder/plugin.wasm", bytes("prefixed"));
        server.wait_for_list_change(seen).await;
        let echoed = server.call("folder_echo", json!({"x": 1})).await;
        assert_eq!(text(&echoed), r#"{"x":1}"#, "{era:?}");
        assert!(server.tool_names().await.contains(&"echo".to_string()));
        server.stop().await;
    }
}

#[tokio::test]
async fn a_changed_component_is_swapped_in_with_a_notification() {
    let dir = PluginDir::new();
    dir.replace("ver.wasm", bytes("reload-v1"));
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    assert_eq!(version(&server).await, "v1");
    assert_eq!(server.tool_names().await, ["slow_version", "version"]);

    dir.replace("ver.wasm", bytes("reload-v2"));
    server.wait_for_list_change(0).await;
    assert_eq!(server.tool_names().await, ["added_in_v2", "slow_version", "version"]);
    assert_eq!(version(&server).await, "v2");
    assert_eq!(text(&server.call("added_in_v2", json!({})).await), "new in v2");
    let log = server.stop().await;
    assert!(log.contains("reloaded plugin `ver`"), "{log}");
}

#[tokio::test]
async fn a_call_in_flight_finishes_on_the_version_it_started_on() {
    let dir = PluginDir::new();
    dir.replace("ver.wasm", bytes("reload-v1"));
    let server = Arc::new(serve(dir.path(), Era::Handshake, &[]).await);
    let slow = {
        let server = server.clone();
        tokio::spawn(async move { server.call("slow_version", json!({"ms": 5000})).await })
    };
    // Ample time for the call to reach the server and start on v1.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    dir.replace("ver.wasm", bytes("reload-v2"));
    server.wait_for_list_change(0).await;
    assert_eq!(version(&server).await, "v2", "calls after the swap use the new version");
    let result = slow.await.unwrap();
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(text(&result), "v1", "the call in flight finished on the old version");
}

#[tokio::test]
async fn a_broken_replacement_keeps_the_previous_version_serving() {
    let dir = PluginDir::new();
    dir.replace("ver.wasm", bytes("reload-v1"));
    let server = serve(dir.path(), Era::Handshake, &["-v"]).await;
    assert_eq!(version(&server).await, "v1");

    // Garbage, written in place; then the same garbage again.
    dir.write("ver.wasm", b"this is not wasm at all");
    server.wait_for_log("not a WebAssembly file").await;
    assert_eq!(version(&server).await, "v1");
    dir.write("ver.wasm", b"this is not wasm at all");

    // A component cut off half-way, as a slow copy would leave it.
    let v2 = bytes("reload-v2");
    dir.write("ver.wasm", &v2[..v2.len() / 2]);
    server.wait_for_log("cannot compile the component").await;
    assert_eq!(version(&server).await, "v1");

    // Back to the good bytes, then a manifest with a typo.
    dir.replace("ver.wasm", bytes("reload-v1"));
    dir.write("ver.toml", "[limits]\ntimeuot = \"1s\"\n");
    server.wait_for_log("timeuot").await;
    assert_eq!(version(&server).await, "v1");
    std::fs::remove_file(dir.path().join("ver.toml")).unwrap();

    // The next good change is tried again, and taken.
    dir.replace("ver.wasm", bytes("reload-v2"));
    server.wait_for_list_change(0).await;
    assert_eq!(version(&server).await, "v2");
    let log = server.stop().await;
    // Each failure once, with the file and the reason; the second identical
    // garbage write was not logged again.
    assert_eq!(log.matches("not a WebAssembly file").count(), 1, "{log}");
    assert_eq!(log.matches("cannot compile the component").count(), 1, "{log}");
    assert!(
        log.contains("cannot reload plugin `ver`") && log.contains("ver.wasm: ") && log.contains("keeps serving"),
        "{log}"
    );
    // Nothing a client sees changed until v2 arrived: exactly one notification.
    assert_eq!(server_list_changes(&log), 1, "{log}");
}

/// The number of catalog swaps after startup that changed the tool list,
/// from the log of a server started with `-v`.
fn server_list_changes(log: &str) -> usize {
    let started = log.find("warden::serve: loaded").expect("the startup line is logged");
    log[started..].matches("tools_changed=true").count()
}

/// Waits until the reconciler swapped the catalog `n` times after startup
/// (a server started with `-v`).
async fn wait_for_swaps(server: &Server, n: usize) {
    server
        .wait_until(&format!("{n} catalog swaps"), || {
            let log = server.log();
            let started = log.find("warden::serve: loaded")?;
            (log[started..].matches("catalog swapped").count() >= n).then_some(())
        })
        .await
}

#[tokio::test]
async fn a_deleted_plugin_disappears_with_a_notification() {
    for era in ERAS {
        let dir = PluginDir::with(&["misbehave"]);
        dir.replace("ver.wasm", bytes("reload-v1"));
        let server = serve(dir.path(), era, &[]).await;
        assert_eq!(version(&server).await, "v1");

        std::fs::remove_file(dir.path().join("ver.wasm")).unwrap();
        server.wait_for_list_change(0).await;
        assert!(!server.tool_names().await.contains(&"version".to_string()), "{era:?}");
        match server.try_call("version", json!({})).await {
            Err(ServiceError::McpError(error)) => assert_eq!(error.code, ErrorCode::INVALID_PARAMS),
            other => panic!("{era:?}: expected -32602 for a removed tool, got {other:?}"),
        }
        assert!(server.tool_names().await.contains(&"echo".to_string()));
        let log = server.stop().await;
        assert!(log.contains("unloaded plugin `ver`"), "{log}");
    }
}

#[tokio::test]
async fn a_manifest_only_change_reapplies_limits_without_compiling() {
    let dir = PluginDir::with(&["misbehave"]);
    dir.write("misbehave.toml", "[limits]\noutput = \"1 KiB\"\n");
    let server = serve(dir.path(), Era::Handshake, &["-v"]).await;
    let big = server.call("big", json!({"bytes": 4000})).await;
    assert!(is_error(&big), "{big:?}");
    assert!(text(&big).contains("[limits] output"), "{big:?}");

    dir.replace("misbehave.toml", "[limits]\noutput = \"1 MiB\"\n");
    // The reload is logged a moment before the new catalog is swapped in.
    wait_for_swaps(&server, 1).await;
    let big = server.call("big", json!({"bytes": 4000})).await;
    assert!(!is_error(&big), "{big:?}");
    assert_eq!(text(&big).len(), 4000);
    let log = server.stop().await;
    // Measured, not assumed: the loader reports where the code came from.
    assert!(
        log.contains("reloaded plugin `misbehave`") && log.contains("(code: reused;"),
        "{log}"
    );
    assert_eq!(log.matches("(code: compiled;").count(), 0, "{log}");
    // The tools did not change, so clients were not told anything.
    assert_eq!(server_list_changes(&log), 0, "{log}");
}

#[tokio::test]
async fn a_renamed_plugin_is_reloaded_under_its_new_name() {
    let dir = PluginDir::new();
    dir.replace("ver.wasm", bytes("reload-v1"));
    let server = serve(dir.path(), Era::Handshake, &["-v"]).await;
    server.wait_for_log("warden::serve: loaded").await;
    std::fs::rename(dir.path().join("ver.wasm"), dir.path().join("renamed.wasm")).unwrap();
    wait_for_swaps(&server, 1).await;
    assert_eq!(version(&server).await, "v1");
    let log = server.stop().await;
    assert!(log.contains("unloaded plugin `ver`"), "{log}");
    assert!(
        log.contains("loaded plugin `renamed`") && log.contains("(code: reused;"),
        "{log}"
    );
    // Same tools under another plugin name: nothing visible changed.
    assert_eq!(server_list_changes(&log), 0, "{log}");
}

#[tokio::test]
async fn calls_never_fail_while_the_plugin_is_replaced_50_times() {
    const REPLACEMENTS: usize = 50;
    const CALLERS: usize = 4;
    let dir = PluginDir::new();
    let cache = tempfile::tempdir().unwrap();
    dir.replace("ver.wasm", bytes("reload-v1"));
    let server = Arc::new(serve_with_cache(&dir, cache.path(), Era::Handshake).await);
    let stop = Arc::new(AtomicBool::new(false));
    let mut callers = Vec::new();
    for _ in 0..CALLERS {
        let server = server.clone();
        let stop = stop.clone();
        callers.push(tokio::spawn(async move {
            let mut answers: BTreeMap<String, usize> = BTreeMap::new();
            while !stop.load(Ordering::Relaxed) {
                let result = server
                    .try_call("version", json!({}))
                    .await
                    .expect("no call fails during a reload");
                assert!(!is_error(&result), "{result:?}");
                *answers.entry(text(&result)).or_default() += 1;
            }
            answers
        }));
    }
    let (v1, v2) = (bytes("reload-v1"), bytes("reload-v2"));
    let mut seen = 0;
    for i in 0..REPLACEMENTS {
        let next = if i % 2 == 0 { &v2 } else { &v1 };
        if i % 4 < 2 {
            dir.replace("ver.wasm", next);
        } else {
            // In place: the reconciler may see a partly written file first.
            dir.write("ver.wasm", next);
        }
        // Each swap between v1 and v2 changes the tool list: wait for it.
        seen = server.wait_for_list_change(seen).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    for caller in callers {
        for (answer, count) in caller.await.expect("no caller panicked") {
            *total.entry(answer).or_default() += count;
        }
    }
    let answers: Vec<&str> = total.keys().map(String::as_str).collect();
    assert!(answers.iter().all(|a| *a == "v1" || *a == "v2"), "{total:?}");
    assert!(total.values().sum::<usize>() >= REPLACEMENTS, "{total:?}");
    assert_eq!(seen, REPLACEMENTS);
    let server = Arc::into_inner(server).expect("the callers are done");
    let log = server.stop().await;
    assert!(log.matches("reloaded plugin `ver`").count() >= REPLACEMENTS, "{log}");
}

#[tokio::test]
async fn a_restart_with_a_warm_cache_compiles_nothing() {
    let dir = PluginDir::with(&["misbehave", "reload-v1"]);
    // One plugin on the fuel-metering engine, whose code is cached apart.
    dir.add("prefixed", "metered");
    dir.write("metered.toml", "[limits]\nfuel = 100000000\n");
    let cache = tempfile::tempdir().unwrap();
    let entries = || {
        let mut names: Vec<String> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };

    let cold = serve_with_cache(&dir, cache.path(), Era::Handshake).await;
    assert_eq!(cold.tool_names().await.len(), 15);
    let log = cold.stop().await;
    assert!(log.contains("compiled=3 from_cache=0"), "{log}");
    let written = entries();
    assert_eq!(written.len(), 3, "{written:?}");
    assert!(written.iter().all(|n| n.ends_with(".cwasm")), "{written:?}");

    let warm = serve_with_cache(&dir, cache.path(), Era::Handshake).await;
    assert_eq!(text(&warm.call("prefixed_echo", json!({})).await), "{}");
    let log = warm.stop().await;
    assert!(log.contains("compiled=0 from_cache=3"), "{log}");
    assert_eq!(entries(), written, "a warm start writes no entry");

    // A corrupt entry is noticed and replaced; the others still load.
    let victim = cache.path().join(&written[0]);
    let good = std::fs::read(&victim).unwrap();
    std::fs::write(&victim, &good[..good.len() / 3]).unwrap();
    let repaired = serve_with_cache(&dir, cache.path(), Era::Handshake).await;
    assert_eq!(repaired.tool_names().await.len(), 15);
    let log = repaired.stop().await;
    assert!(log.contains("compiled=1 from_cache=2"), "{log}");
    assert!(log.contains("is unusable"), "{log}");
    assert_eq!(entries(), written);

    // --no-cache compiles everything and writes nothing.
    let uncached = serve(dir.path(), Era::Handshake, &["--no-cache", "--no-watch"]).await;
    let log = uncached.stop().await;
    assert!(log.contains("compiled=3 from_cache=0"), "{log}");
    assert_eq!(entries(), written);
}

#[tokio::test]
async fn list_changed_is_advertised_only_while_watching() {
    let dir = PluginDir::with(&["misbehave"]);
    let watching = serve(dir.path(), Era::Handshake, &[]).await;
    let info = watching.client.peer_info().expect("the handshake happened");
    assert_eq!(
        info.capabilities.tools.as_ref().and_then(|t| t.list_changed),
        Some(true)
    );
    watching.stop().await;

    let fixed = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let info = fixed.client.peer_info().expect("the handshake happened");
    assert_eq!(info.capabilities.tools.as_ref().and_then(|t| t.list_changed), None);
    dir.replace("ver.wasm", bytes("reload-v1"));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!fixed.tool_names().await.contains(&"version".to_string()));
    fixed.stop().await;
}

/// A folder updated the way the kubelet updates a mounted ConfigMap (its
/// AtomicWriter): the files live in a timestamped folder `..<timestamp>/`,
/// `..data` is a symlink to it, and each visible name is a symlink
/// `name -> ..data/name`. An update writes a new timestamped folder, points
/// `..data_tmp` at it, renames that over `..data` (the atomic step), adds
/// visible symlinks for new names, removes those of names that went, and
/// deletes the old folder. The visible symlinks of names that stay are never
/// touched.
struct ConfigMapVolume {
    dir: std::path::PathBuf,
    generation: usize,
    current: Option<String>,
    names: Vec<String>,
}

impl ConfigMapVolume {
    fn create(dir: &Path, files: &[(&str, Vec<u8>)]) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let mut volume = Self {
            dir: dir.to_path_buf(),
            generation: 0,
            current: None,
            names: Vec::new(),
        };
        volume.update(files);
        volume
    }

    fn update(&mut self, files: &[(&str, Vec<u8>)]) {
        use std::os::unix::fs::symlink;
        self.generation += 1;
        let stamped = format!("..2024_01_01_00_00_{:02}.{}", self.generation, 123456789);
        std::fs::create_dir(self.dir.join(&stamped)).unwrap();
        for (name, contents) in files {
            std::fs::write(self.dir.join(&stamped).join(name), contents).unwrap();
        }
        symlink(&stamped, self.dir.join("..data_tmp")).unwrap();
        std::fs::rename(self.dir.join("..data_tmp"), self.dir.join("..data")).unwrap();
        let names: Vec<String> = files.iter().map(|(name, _)| name.to_string()).collect();
        for name in &names {
            if !self.names.contains(name) {
                symlink(format!("..data/{name}"), self.dir.join(name)).unwrap();
            }
        }
        for name in &self.names {
            if !names.contains(name) {
                std::fs::remove_file(self.dir.join(name)).unwrap();
            }
        }
        if let Some(old) = self.current.replace(stamped) {
            std::fs::remove_dir_all(self.dir.join(old)).unwrap();
        }
        self.names = names;
    }
}

/// Calls `big` until its 4000 bytes come back whole (the output limit was
/// raised), for up to `support::LONG_WAIT`.
async fn wait_for_big_output(server: &Server) {
    let deadline = std::time::Instant::now() + support::LONG_WAIT;
    loop {
        let big = server.call("big", json!({"bytes": 4000})).await;
        if !is_error(&big) {
            assert_eq!(text(&big).len(), 4000);
            return;
        }
        assert!(text(&big).contains("[limits] output"), "{big:?}");
        assert!(
            std::time::Instant::now() < deadline,
            "the raised limit was not applied within {:?}; server log:\n{}",
            support::LONG_WAIT,
            server.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The layout of deploy/kubernetes: the components are regular files (copied
/// into the plugins folder by an init container), the manifests come from a
/// ConfigMap mounted at `<plugins>/..manifests`, and each `name.toml` is a
/// symlink `..manifests/name.toml`. Editing the ConfigMap changes a limit
/// without restarting the pod.
#[tokio::test]
async fn a_configmap_swap_of_the_manifests_beside_the_components_is_applied() {
    let dir = PluginDir::with(&["misbehave"]);
    let mut manifests = ConfigMapVolume::create(
        &dir.path().join("..manifests"),
        &[("misbehave.toml", b"[limits]\noutput = \"1 KiB\"\n".to_vec())],
    );
    std::os::unix::fs::symlink("..manifests/misbehave.toml", dir.path().join("misbehave.toml")).unwrap();
    let server = serve(dir.path(), Era::Handshake, &["-v"]).await;
    let big = server.call("big", json!({"bytes": 4000})).await;
    assert!(is_error(&big) && text(&big).contains("[limits] output"), "{big:?}");

    manifests.update(&[("misbehave.toml", b"[limits]\noutput = \"1 MiB\"\n".to_vec())]);
    wait_for_big_output(&server).await;
    let log = server.stop().await;
    // Only the manifest changed: the compiled code was reused.
    assert!(
        log.contains("reloaded plugin `misbehave`") && log.contains("(code: reused;"),
        "{log}"
    );
}

/// A ConfigMap (with `binaryData`) mounted as the plugins folder itself:
/// component and manifest both reach Warden through `..data` symlinks, and a
/// new component sent through the swap is loaded, with a notification.
#[tokio::test]
async fn a_configmap_swap_of_the_whole_plugins_folder_is_applied() {
    for era in ERAS {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("plugins");
        let mut volume = ConfigMapVolume::create(
            &dir,
            &[
                ("ver.wasm", bytes("reload-v1")),
                ("ver.toml", b"[limits]\ntimeout = \"10s\"\n".to_vec()),
            ],
        );
        let server = serve(&dir, era, &[]).await;
        assert_eq!(version(&server).await, "v1");

        volume.update(&[
            ("ver.wasm", bytes("reload-v2")),
            ("ver.toml", b"[limits]\ntimeout = \"10s\"\n".to_vec()),
        ]);
        server.wait_for_list_change(0).await;
        assert_eq!(version(&server).await, "v2", "{era:?}");
        assert_eq!(text(&server.call("added_in_v2", json!({})).await), "new in v2");

        // A plugin removed from the ConfigMap is unloaded.
        let seen = server.list_changes();
        volume.update(&[]);
        server.wait_for_list_change(seen).await;
        assert!(!server.tool_names().await.contains(&"version".to_string()), "{era:?}");
        server.stop().await;
    }
}

#[tokio::test]
async fn a_folder_plugin_reloads_at_any_change_in_its_folder_and_a_bare_one_only_when_its_files_change() {
    // The conformance fixtures keep a marker in their own `state/` folder
    // that decides whether `test_dynamic_tool` is declared.
    let dir = PluginDir::with(&["text"]);
    let folder = dir.path().canonicalize().unwrap().join("conformance");
    std::fs::create_dir_all(folder.join("state")).unwrap();
    std::fs::copy(guest("conformance"), folder.join("plugin.wasm")).unwrap();
    std::fs::write(
        folder.join("plugin.toml"),
        format!(
            "[filesystem]\n{:?} = {{ mount = \"/state\", access = \"read-write\" }}\n",
            folder.join("state").display().to_string()
        ),
    )
    .unwrap();
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let seen = server.list_changes();
    let result = server.call("test_trigger_tool_change", json!({})).await;
    assert!(!is_error(&result), "{result:?}");
    server.wait_for_list_change(seen).await;
    assert!(server.tool_names().await.contains(&"test_dynamic_tool".to_string()));

    // `text.wasm` opened for writing and closed unchanged: an event, no reload.
    // Batches are applied in order, so once `clock` is served that event was
    // handled too.
    drop(
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("text.wasm"))
            .unwrap(),
    );
    dir.add("clock", "clock");
    server
        .wait_until("clock loaded", || {
            server.log().contains("loaded plugin `clock`").then_some(())
        })
        .await;
    let log = server.stop().await;
    assert_eq!(log.matches("reloaded plugin `text`").count(), 0, "{log}");
    // At least once: the guest's writes to its marker (create, write, close)
    // may fall into two 50 ms batches of events on a loaded machine, and each
    // batch reloads the folder plugin.
    assert!(log.matches("reloaded plugin `conformance`").count() >= 1, "{log}");
}
