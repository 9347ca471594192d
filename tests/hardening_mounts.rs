//! Mounts that move, the compiled-code cache, and exact-IP network entries:
//! a plugin cannot redirect a mount after load, no mount reaches where code
//! and grants come from, only a private cache folder's private entries are
//! loaded as native code, and an exact-IP entry opens only its own port.
//! Every hostile attempt is followed by a call to a healthy plugin.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde_json::json;
use support::attacks::{allowed, healthy, refused};
use support::{Era, PluginDir, http_server, serve};

/// A manifest line granting `host` at `guest`.
fn mount(host: &Path, guest: &str, access: &str) -> String {
    format!(
        "{:?} = {{ mount = \"{guest}\", access = \"{access}\" }}\n",
        host.display().to_string()
    )
}

/// A temporary folder, by its real path (mounts must name folders by it).
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().canonicalize().unwrap();
    (dir, real)
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn a_mount_swapped_for_a_symlink_after_load_still_reaches_the_folder_granted() {
    // `hostile` may write /x; `notes` was granted /x/inner. Swapping `inner` for a
    // symlink to a folder nobody granted must not hand `notes` that folder.
    let (_base, base) = scratch();
    let (x, secret) = (base.join("x"), base.join("secret"));
    std::fs::create_dir_all(x.join("inner")).unwrap();
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(x.join("inner/mine.md"), "mine").unwrap();
    std::fs::write(secret.join("secret.md"), "the secret").unwrap();
    let dir = PluginDir::with(&["hostile", "notes", "text"]);
    dir.write(
        "hostile.toml",
        format!("[filesystem]\n{}", mount(&x, "/x", "read-write")),
    );
    let notes_manifest = format!("[filesystem]\n{}", mount(&x.join("inner"), "/notes", "read-write"));
    dir.write("notes.toml", &notes_manifest);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    assert_eq!(allowed(&server, "read_note", json!({"name": "mine"})).await, "mine");

    // The swap: `inner` moves away and a relative symlink to the secret takes its place.
    assert_eq!(
        allowed(&server, "rename", json!({"from": "/x/inner", "to": "/x/moved"})).await,
        "renamed"
    );
    assert_eq!(
        allowed(&server, "symlink", json!({"target": "../secret", "link": "/x/inner"})).await,
        "linked"
    );
    assert_eq!(
        std::fs::read_to_string(x.join("inner/secret.md")).unwrap(),
        "the secret",
        "on the host, the path now leads to the secret"
    );
    // `notes` still reaches the folder it was granted, wherever it moved.
    assert_eq!(allowed(&server, "read_note", json!({"name": "mine"})).await, "mine");
    let secret_read = refused(&server, "read_note", json!({"name": "secret"})).await;
    assert!(!secret_read.contains("the secret"), "{secret_read}");
    let listed = allowed(&server, "list_notes", json!({})).await;
    assert!(listed.contains("mine") && !listed.contains("secret"), "{listed}");
    // The symlink does not lead `hostile` out of its own mount either.
    refused(&server, "read_file", json!({"path": "/x/inner/secret.md"})).await;

    // Reloading `notes` now finds its path is a symlink: refused, and the
    // version pinned to the granted folder keeps serving.
    dir.write("notes.toml", format!("{notes_manifest}[limits]\ntimeout = \"20s\"\n"));
    server.wait_for_log("cannot reload plugin `notes`").await;
    let log = server.log();
    assert!(
        log.contains(&format!(
            "`filesystem.\"{}\"`: the host path is a symlink",
            x.join("inner").display()
        )),
        "{log}"
    );
    assert_eq!(allowed(&server, "read_note", json!({"name": "mine"})).await, "mine");

    // Deleting the granted folder leaves `notes` with nothing, never the secret.
    assert_eq!(
        allowed(&server, "remove_dir", json!({"path": "/x/moved"})).await,
        "removed"
    );
    let gone = server.call("list_notes", json!({})).await;
    assert!(!format!("{gone:?}").contains("secret"), "{gone:?}");
    refused(&server, "read_note", json!({"name": "secret"})).await;
    server.stop().await;
}

/// Serves `plugins` with `cache` as the cache folder (and no watching);
/// returns the server's log once `text` answers.
async fn load_log(plugins: &Path, cache: &Path) -> String {
    let server = serve(
        plugins,
        Era::Handshake,
        &["--no-watch", "--cache-dir", cache.to_str().unwrap()],
    )
    .await;
    healthy(&server).await;
    server.stop().await
}

#[tokio::test]
async fn mounts_that_could_be_redirected_or_reach_code_and_grants_are_refused_at_load() {
    let (_base, base) = scratch();
    let cache = base.join("cache");
    for folder in ["x/inner", "real/sub", "cache/sub", "elsewhere"] {
        std::fs::create_dir_all(base.join(folder)).unwrap();
    }
    std::os::unix::fs::symlink("real", base.join("link")).unwrap();
    let dir = PluginDir::with(&["hostile", "text"]);
    let plugins = dir.path().canonicalize().unwrap();
    std::fs::create_dir(plugins.join("loose")).unwrap();
    let rw = |path: &Path, guest: &str| mount(path, guest, "read-write");
    let shapes: Vec<(String, String)> = vec![
        (
            rw(&base.join("x"), "/x") + &rw(&base.join("x/inner"), "/inner"),
            format!(
                "`filesystem.\"{}\"` and `filesystem.\"{}\"` overlap (one folder is inside the other)",
                base.join("x/inner").display(),
                base.join("x").display()
            ),
        ),
        (
            rw(&base.join("link"), "/l"),
            format!(
                "`filesystem.\"{}\"`: the host path is a symlink",
                base.join("link").display()
            ),
        ),
        (
            rw(&base.join("link/sub"), "/l"),
            format!(
                "`filesystem.\"{}\"`: the host path leads to {} through a symlink",
                base.join("link/sub").display(),
                base.join("real/sub").display()
            ),
        ),
        (
            mount(&plugins, "/plugins", "read-only"),
            format!("holds the plugins folder {}", plugins.display()),
        ),
        (
            rw(&base, "/base"),
            format!("overlaps the compiled-code cache folder {}", cache.display()),
        ),
        (
            rw(&cache.join("sub"), "/c"),
            format!("overlaps the compiled-code cache folder {}", cache.display()),
        ),
        (
            rw(&plugins.join("loose"), "/p"),
            format!("is inside the plugins folder {}", plugins.display()),
        ),
    ];
    for (filesystem, expected) in shapes {
        dir.write("hostile.toml", format!("[filesystem]\n{filesystem}"));
        let log = load_log(&plugins, &cache).await;
        let line = log
            .lines()
            .find(|l| l.contains("skipped plugin") && l.contains("hostile.wasm"))
            .unwrap_or_else(|| panic!("hostile must be refused for {filesystem}:\n{log}"));
        assert!(
            line.contains(&format!("invalid manifest {}", plugins.join("hostile.toml").display())),
            "{line}"
        );
        assert!(
            line.contains(&expected),
            "{filesystem}: expected {expected:?} in\n{line}"
        );
    }

    // A folder plugin may mount a subfolder of its own folder (never the folder
    // itself, nor another plugin's).
    std::fs::remove_file(plugins.join("hostile.toml")).unwrap();
    std::fs::remove_file(plugins.join("hostile.wasm")).unwrap();
    let own = plugins.join("own");
    std::fs::create_dir_all(own.join("state")).unwrap();
    std::fs::copy(support::guest("hostile"), own.join("plugin.wasm")).unwrap();
    for (filesystem, refusal) in [
        (rw(&own, "/own"), Some("is inside the plugins folder")),
        (rw(&plugins.join("loose"), "/p"), Some("is inside the plugins folder")),
        (rw(&own.join("state"), "/state"), None),
    ] {
        std::fs::write(own.join("plugin.toml"), format!("[filesystem]\n{filesystem}")).unwrap();
        let server = serve(
            &plugins,
            Era::Handshake,
            &["--no-watch", "--cache-dir", cache.to_str().unwrap()],
        )
        .await;
        match refusal {
            Some(refusal) => {
                let checked = support::warden().arg("check").arg(&own).output().await.unwrap();
                let report = String::from_utf8(checked.stdout).unwrap();
                assert!(!checked.status.success() && report.contains(refusal), "{report}");
                let log = server.log();
                assert!(
                    log.contains("skipped plugin") && log.contains(refusal) && log.contains("own/plugin.toml"),
                    "{filesystem}:\n{log}"
                );
                assert!(!server.tool_names().await.contains(&"write_file".to_string()));
            }
            None => {
                allowed(&server, "write_file", json!({"path": "/state/kept", "content": "x"})).await;
                assert_eq!(std::fs::read_to_string(own.join("state/kept")).unwrap(), "x");
                // Its own manifest and component stay out of reach.
                refused(&server, "read_file", json!({"path": "/state/../plugin.toml"})).await;
                // `warden check` of the folder plugin alone applies the same rules.
                let checked = support::warden().arg("check").arg(&own).output().await.unwrap();
                let report = String::from_utf8(checked.stdout).unwrap();
                assert!(checked.status.success(), "{report}");
                assert!(
                    report.contains("✓ own")
                        && report.contains(&format!("{} → /state (read-write)", own.join("state").display())),
                    "{report}"
                );
            }
        }
        healthy(&server).await;
        server.stop().await;
    }
}

/// The compiled-code cache's entries, by name.
fn entries(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn native_code_is_loaded_only_from_a_private_cache_folder_and_private_entries() {
    let dir = PluginDir::with(&["hostile", "text"]);
    let (_cache_dir, cache) = scratch();
    let log = load_log(dir.path(), &cache).await;
    assert!(log.contains("compiled=2 from_cache=0"), "{log}");
    let written = entries(&cache);
    assert_eq!(written.len(), 2, "{written:?}");
    for entry in &written {
        assert_eq!(mode(&cache.join(entry)), 0o600, "{entry}");
    }
    assert!(load_log(dir.path(), &cache).await.contains("compiled=0 from_cache=2"));

    // A folder others may write to: its entries could be anyone's code. Nothing
    // is loaded from it (or written to it), and the plugins still serve.
    set_mode(&cache, 0o777);
    let log = load_log(dir.path(), &cache).await;
    assert!(
        log.contains(&format!(
            "the compiled-code cache folder {} is writable by its group and others (mode 777)",
            cache.display()
        )) && log.contains("compiling without a cache"),
        "{log}"
    );
    assert!(log.contains("compiled=2 from_cache=0"), "{log}");
    assert_eq!(entries(&cache), written, "nothing written to it");
    set_mode(&cache, 0o700);

    // An entry others may have written is not loaded: recompiled and replaced.
    let victim = cache.join(&written[0]);
    set_mode(&victim, 0o666);
    let log = load_log(dir.path(), &cache).await;
    assert!(
        log.contains(&format!(
            "compiled-code cache entry {} is not loaded: it is writable by its group and others (mode 666); \
             recompiling and replacing it",
            victim.display()
        )),
        "{log}"
    );
    assert!(log.contains("compiled=1 from_cache=1"), "{log}");
    assert_eq!(mode(&victim), 0o600, "replaced by a private entry");

    // An entry that is a symlink (say, to a good entry elsewhere) is not followed.
    let elsewhere = cache.with_extension("elsewhere");
    std::fs::rename(&victim, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &victim).unwrap();
    let log = load_log(dir.path(), &cache).await;
    assert!(log.contains("is not loaded: it is a symlink"), "{log}");
    assert!(log.contains("compiled=1 from_cache=1"), "{log}");
    assert!(std::fs::symlink_metadata(&victim).unwrap().is_file());
    std::fs::remove_file(&elsewhere).unwrap();
    assert!(load_log(dir.path(), &cache).await.contains("compiled=0 from_cache=2"));
}

#[tokio::test]
async fn an_exact_ip_entry_opens_only_its_own_port() {
    let http = http_server().await;
    let port = http.port;
    let other_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    // The name passes the name check; the address it resolves to is opened
    // only by an exact-IP entry for that port.
    let dir = PluginDir::with(&["hostile", "text"]);
    dir.write(
        "hostile.toml",
        format!("[network]\nallow = [\"localhost:{port}\", \"127.0.0.1:{other_port}\"]\n"),
    );
    let server = serve(dir.path(), Era::Stateless, &[]).await;
    let wrong_port = refused(
        &server,
        "fetch",
        json!({"url": format!("http://localhost:{port}/hello")}),
    )
    .await;
    assert!(
        wrong_port.contains("resolves to 127.0.0.1") || wrong_port.contains("resolves to ::1"),
        "{wrong_port}"
    );
    assert!(
        wrong_port.contains("only an exact IP entry for that address and port"),
        "{wrong_port}"
    );
    assert_eq!(http.connections.load(Ordering::SeqCst), 0, "refused before connecting");
    server.stop().await;

    // With the exact IP listed for this port, the same request goes through.
    dir.write(
        "hostile.toml",
        format!("[network]\nallow = [\"localhost:{port}\", \"127.0.0.1:{port}\"]\n"),
    );
    let server = serve(dir.path(), Era::Stateless, &[]).await;
    assert_eq!(
        allowed(
            &server,
            "fetch",
            json!({"url": format!("http://localhost:{port}/hello")})
        )
        .await,
        "status 200\nhello"
    );
    assert_eq!(http.connections.load(Ordering::SeqCst), 1);
    healthy(&server).await;
    server.stop().await;
}
