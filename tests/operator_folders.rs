//! What deploy scripts do to a running server's plugins folder: the folder is
//! the path the operator named, not the inode it had at start (issue 28).
//! Each test drives the real binary and waits for what a client would see.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::{Path, PathBuf};

use support::{Era, PluginDir, Server, guest, namespaces, serve_command};

const TEXT: [&str; 3] = ["change_case", "slugify", "text_stats"];
const CLOCK: [&str; 4] = ["date_add", "date_diff", "now", "weekday"];

async fn sorted_tools(server: &Server) -> Vec<String> {
    let mut names = server.tool_names().await;
    names.sort();
    names
}

/// Waits until the server lists exactly `want`.
async fn wait_for_tools(server: &Server, want: &[&str]) {
    let deadline = std::time::Instant::now() + support::LONG_WAIT;
    loop {
        let names = sorted_tools(server).await;
        if names == want {
            return;
        }
        if std::time::Instant::now() > deadline {
            panic!("still serving {names:?}, not {want:?}; server log:\n{}", server.log());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn copy_guest(name: &str, folder: &Path) {
    std::fs::copy(guest(name), folder.join(format!("{name}.wasm"))).unwrap();
}

async fn serve_at(path: &Path) -> Server {
    serve_command(
        support::warden(),
        path,
        Era::Handshake,
        &[],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await
}

#[tokio::test]
async fn a_plugins_folder_removed_and_created_again_is_followed() {
    let base = tempfile::tempdir().unwrap();
    let plugins = base.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    copy_guest("text", &plugins);
    let server = serve_at(&plugins).await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    let seen = server.list_changes();

    // `rm -rf plugins && mkdir plugins && cp …`
    std::fs::remove_dir_all(&plugins).unwrap();
    std::fs::create_dir(&plugins).unwrap();
    copy_guest("clock", &plugins);
    wait_for_tools(&server, &CLOCK).await;
    assert!(server.list_changes() > seen, "the client was told");
    server
        .wait_for_log(&format!(
            "the plugins folder {} is another folder now",
            plugins.display()
        ))
        .await;

    // And hot reload still works in the new folder.
    copy_guest("text", &plugins);
    let mut both: Vec<&str> = CLOCK.iter().chain(TEXT.iter()).copied().collect();
    both.sort();
    wait_for_tools(&server, &both).await;
    server.stop().await;
}

#[tokio::test]
async fn a_swapped_release_symlink_is_followed() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    for (release, plugin) in [("r1", "text"), ("r2", "clock")] {
        std::fs::create_dir(base_path.join(release)).unwrap();
        copy_guest(plugin, &base_path.join(release));
    }
    let current = base_path.join("current");
    std::os::unix::fs::symlink("r1", &current).unwrap();
    let server = serve_at(&current).await;
    assert_eq!(sorted_tools(&server).await, TEXT);

    // `ln -s r2 current.tmp && mv -T current.tmp current`
    std::os::unix::fs::symlink("r2", base_path.join("current.tmp")).unwrap();
    std::fs::rename(base_path.join("current.tmp"), &current).unwrap();
    wait_for_tools(&server, &CLOCK).await;
    let log = server.log();
    assert!(
        log.contains(&format!(
            "the plugins folder {} is {} now (was {})",
            current.display(),
            base_path.join("r2").display(),
            base_path.join("r1").display()
        )),
        "{log}"
    );
    // Edits in r1 no longer matter; edits in r2 do.
    copy_guest("misbehave", &base_path.join("r1"));
    copy_guest("text", &base_path.join("r2"));
    let mut both: Vec<&str> = CLOCK.iter().chain(TEXT.iter()).copied().collect();
    both.sort();
    wait_for_tools(&server, &both).await;
    server.stop().await;
}

#[tokio::test]
async fn a_removed_folder_keeps_its_plugins_until_one_is_back() {
    let base = tempfile::tempdir().unwrap();
    let plugins = base.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    copy_guest("text", &plugins);
    let server = serve_at(&plugins).await;
    std::fs::rename(&plugins, base.path().join("elsewhere")).unwrap();
    server
        .wait_for_log(&format!(
            "the plugins folder {} is gone (No such file or directory (os error 2)); keeping the 1 plugin(s)",
            plugins.display()
        ))
        .await;
    assert_eq!(sorted_tools(&server).await, TEXT, "still served");
    // A new release prepared beside it, then renamed into place.
    let next = base.path().join("next");
    std::fs::create_dir(&next).unwrap();
    copy_guest("clock", &next);
    std::fs::rename(&next, &plugins).unwrap();
    wait_for_tools(&server, &CLOCK).await;
    server.stop().await;
}

#[tokio::test]
async fn a_component_truncated_in_place_then_written_in_two_halves_is_loaded_once_whole() {
    let dir = PluginDir::with(&["text"]);
    let server = serve_at(dir.path()).await;
    let refusals = |server: &Server| server.log().matches("cannot reload plugin `text`").count();
    // Truncated in place: refused, the loaded version keeps serving.
    std::fs::File::create(dir.path().join("text.wasm")).unwrap();
    server
        .wait_until("the empty file refused", || (refusals(&server) == 1).then_some(()))
        .await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    // Another component written slowly: its first half, then the rest.
    let clock = std::fs::read(guest("clock")).unwrap();
    let (first, rest) = clock.split_at(clock.len() / 2);
    std::fs::write(dir.path().join("text.wasm"), first).unwrap();
    server
        .wait_until("the half file refused", || (refusals(&server) == 2).then_some(()))
        .await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("text.wasm"))
        .unwrap();
    std::io::Write::write_all(&mut file, rest).unwrap();
    drop(file);
    wait_for_tools(&server, &CLOCK).await;
    let log = server.stop().await;
    assert_eq!(log.matches("reloaded plugin `text`").count(), 1, "{log}");
}

#[tokio::test]
async fn the_watch_limit_reached_falls_back_to_polling() {
    // The inotify watch limit is per user namespace: two watches, the
    // folder and the one holding its name, and not one more.
    let unshare = ["-U", "-r"];
    if !namespaces::can_unshare(&unshare) {
        eprintln!("skipped: this machine allows no user namespace to lower the watch limit in");
        return;
    }
    let dir = PluginDir::with(&["text"]);
    let command = namespaces::warden_in(&unshare, "echo 2 > /proc/sys/user/max_inotify_watches");
    let server = serve_command(
        command,
        dir.path(),
        Era::Handshake,
        &[],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    // A folder plugin: its folder is one watch too many.
    let folder = dir.path().join("clock");
    std::fs::create_dir(&folder).unwrap();
    server.wait_for_log("the watch limit was reached").await;
    std::fs::write(folder.join("plugin.toml"), "").unwrap();
    std::fs::copy(guest("clock"), folder.join("plugin.wasm")).unwrap();
    let mut both: Vec<&str> = CLOCK.iter().chain(TEXT.iter()).copied().collect();
    both.sort();
    wait_for_tools(&server, &both).await;
    // Still followed by polling: a removal is noticed too.
    std::fs::remove_file(dir.path().join("text.wasm")).unwrap();
    wait_for_tools(&server, &CLOCK).await;
    let log = server.stop().await;
    assert!(log.contains("polling it every 2 s instead"), "{log}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_git_checkout_of_another_branch_is_served() {
    let repo = tempfile::tempdir().unwrap();
    let plugins = repo.path();
    git(plugins, &["init", "-q", "-b", "one"]);
    copy_guest("text", plugins);
    git(plugins, &["add", "."]);
    git(plugins, &["commit", "-qm", "text"]);
    git(plugins, &["checkout", "-qb", "two"]);
    git(plugins, &["rm", "-q", "text.wasm"]);
    copy_guest("clock", plugins);
    git(plugins, &["add", "."]);
    git(plugins, &["commit", "-qm", "clock"]);
    git(plugins, &["checkout", "-q", "one"]);

    let server = serve_at(plugins).await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    git(plugins, &["checkout", "-q", "two"]);
    wait_for_tools(&server, &CLOCK).await;
    git(plugins, &["checkout", "-q", "one"]);
    wait_for_tools(&server, &TEXT).await;
    server.stop().await;
}

#[tokio::test]
async fn twenty_thousand_events_at_once_lose_no_plugin() {
    // More than inotify queues by default (16 384): the queue overflows, the
    // watcher says so, and the folder is looked at whole.
    let dir = PluginDir::with(&["text"]);
    let server = serve_at(dir.path()).await;
    for n in 0..20_000 {
        std::fs::write(dir.path().join(format!("note-{n}.txt")), b"x").unwrap();
    }
    copy_guest("clock", dir.path());
    let mut both: Vec<&str> = CLOCK.iter().chain(TEXT.iter()).copied().collect();
    both.sort();
    wait_for_tools(&server, &both).await;
    support::attacks::healthy(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn a_folder_found_by_polling_is_followed_like_a_watched_one() {
    // `--poll` is the path a folder takes when it cannot be watched at all
    // (a network file system); the watch limit reached while serving is
    // `the_watch_limit_reached_falls_back_to_polling`.
    let base = tempfile::tempdir().unwrap();
    let plugins = base.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    copy_guest("text", &plugins);
    let server = serve_command(
        support::warden(),
        &plugins,
        Era::Handshake,
        &["--poll"],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    copy_guest("clock", &plugins);
    let mut both: Vec<&str> = CLOCK.iter().chain(TEXT.iter()).copied().collect();
    both.sort();
    wait_for_tools(&server, &both).await;
    std::fs::remove_dir_all(&plugins).unwrap();
    std::fs::create_dir(&plugins).unwrap();
    copy_guest("clock", &plugins);
    wait_for_tools(&server, &CLOCK).await;
    let log = server.log();
    assert!(
        log.contains(&format!(
            "polling {} every 2 s (--poll)",
            plugins.canonicalize().unwrap().display()
        )),
        "{log}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_bind_mounted_folder_remounted_is_followed() {
    if !namespaces::can_unshare(&["-m", "--propagation", "private"]) {
        eprintln!("skipped: this machine allows no mount namespace to bind-mount in");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let [one, two, plugins]: [PathBuf; 3] = ["one", "two", "plugins"].map(|n| base_path.join(n));
    for (folder, plugin) in [(&one, "text"), (&two, "clock")] {
        std::fs::create_dir(folder).unwrap();
        copy_guest(plugin, folder);
    }
    std::fs::create_dir(&plugins).unwrap();
    let command = namespaces::warden_in(
        &["-m", "--propagation", "private"],
        &format!("mount --bind {} {}", one.display(), plugins.display()),
    );
    let server = serve_command(
        command,
        &plugins,
        Era::Handshake,
        &[],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    assert_eq!(sorted_tools(&server).await, TEXT);
    // Remounted from inside warden's mount namespace: no file event at all.
    let remount = std::process::Command::new("nsenter")
        .args(["-t", &server.pid.to_string(), "-m", "sh", "-c"])
        .arg(format!(
            "umount {0} && mount --bind {1} {0}",
            plugins.display(),
            two.display()
        ))
        .status()
        .unwrap();
    assert!(remount.success());
    wait_for_tools(&server, &CLOCK).await;
    server.stop().await;
}

#[tokio::test]
async fn sighup_looks_at_the_folder_again_even_unwatched() {
    // `--no-watch` serves the folder as it was, until the operator says
    // otherwise: SIGHUP (which never ends the server).
    let dir = PluginDir::with(&["text"]);
    let server = serve_command(
        support::warden(),
        dir.path(),
        Era::Handshake,
        &["--no-watch"],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    copy_guest("clock", dir.path());
    std::fs::remove_file(dir.path().join("text.wasm")).unwrap();
    assert_eq!(sorted_tools(&server).await, TEXT, "not watched");
    assert_eq!(unsafe { libc::kill(server.pid as i32, libc::SIGHUP) }, 0);
    wait_for_tools(&server, &CLOCK).await;
    server
        .wait_for_log("looking at every plugins folder again, as asked")
        .await;
    let result = server.call("weekday", serde_json::json!({"date": "2000-01-01"})).await;
    assert_eq!(result.structured_content.unwrap()["weekday"], "Saturday");
    server.stop().await;
}
