//! `warden dev`: build a plugin crate, serve it, and hot-reload it when its
//! source changes — driven like a developer would, with an editor's saves.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::{Era, connect, is_error, text, warden};

/// The first build compiles wit-bindgen and friends: minutes on a loaded
/// 2-core machine when the shared target folder is cold.
const FIRST_BUILD: Duration = Duration::from_secs(900);
const REBUILD: Duration = Duration::from_secs(300);

/// A plugin crate as an author starts one: `warden new NAME --lang rust`.
fn new_crate(parent: &Path) -> std::path::PathBuf {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["new", "hello-dev", "--lang", "rust", "--dir"])
        .arg(parent)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    parent.join("hello-dev")
}

/// Saves a file the way many editors do: a new file renamed over the old.
fn save(path: &Path, contents: &str) {
    let temporary = path.with_extension("rs.swp-save");
    std::fs::write(&temporary, contents).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

/// Saves a file the way other editors do: truncated, then written, in place.
fn save_in_place(path: &Path, contents: &str) {
    let mut file = std::fs::File::create(path).unwrap();
    std::io::Write::write_all(&mut file, contents.as_bytes()).unwrap();
}

/// Replaces `old` (which must be there) with `new` in `path`, and saves.
fn edit(path: &Path, old: &str, new: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(old), "{old:?} is not in {}", path.display());
    save(path, &text.replace(old, new));
}

#[tokio::test]
async fn editing_the_source_rebuilds_and_hot_reloads_the_tool() {
    let parent = tempfile::Builder::new().prefix("warden-dev-crate-").tempdir().unwrap();
    let crate_dir = new_crate(parent.path());
    let lib = crate_dir.join("src/lib.rs");
    let cache = tempfile::tempdir().unwrap();
    let mut command = warden();
    command
        .arg("dev")
        .arg(&crate_dir)
        // Shared across runs (and with tests/interop/new_project.sh), so only the
        // first run compiles the dependencies.
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("dev-guest"))
        .arg("--cache-dir")
        .arg(cache.path());
    let server = connect(command, Era::Handshake, tempfile::NamedTempFile::new().unwrap()).await;

    // The first build runs while the client is connected; the tool appears.
    let seen = server.wait_for_list_change_within(0, FIRST_BUILD).await;
    assert_eq!(server.tool_names().await, ["hello"]);
    let ada = json!({"name": "Ada"});
    assert_eq!(text(&server.call("hello", ada.clone()).await), "Hello, Ada!");

    // A change to what the tool returns: reloaded, but the list is the same, so the
    // client is told nothing; its next call gets the new answer.
    // Counted, not just looked for: a reload before the edit (the first build's
    // own files settling) must not pass for the edit's.
    let reloads = || server.log().matches("reloaded plugin `hello-dev`").count();
    let builds = || server.log().matches("warden dev: building hello-dev… ok in").count();
    let before = reloads();
    edit(&lib, "\"Hello, {}!\"", "\"Howdy, {}!\"");
    server
        .wait_until_within("the reload", REBUILD, || (reloads() > before).then_some(()))
        .await;
    assert_eq!(
        text(&server.call("hello", ada.clone()).await),
        "Howdy, Ada!",
        "{}",
        server.log()
    );
    assert_eq!(server.list_changes(), seen, "the tool list did not change");

    // One build and one reload per save, however the editor writes: in place
    // (truncate, then write), a save that changes nothing, and a rename over
    // the file. Builds run one after another, in order, so once the last
    // save's reload is seen, any extra build or reload would have been too.
    let (built, reloaded) = (builds(), reloads());
    assert_eq!(
        (built, reloaded),
        (2, 1),
        "the first build, then one per save so far:\n{}",
        server.log()
    );
    let howdy = std::fs::read_to_string(&lib).unwrap();
    save_in_place(&lib, &howdy.replace("Howdy", "Hi"));
    server
        .wait_until_within("the in-place save's reload", REBUILD, || {
            (reloads() > reloaded).then_some(())
        })
        .await;
    assert_eq!(text(&server.call("hello", ada.clone()).await), "Hi, Ada!");
    save(&lib, &howdy.replace("Howdy", "Hi"));
    save(&lib, &howdy);
    server
        .wait_until_within("the renamed save's reload", REBUILD, || {
            (reloads() > reloaded + 1).then_some(())
        })
        .await;
    assert_eq!(text(&server.call("hello", ada.clone()).await), "Howdy, Ada!");
    assert_eq!(
        (builds(), reloads()),
        (built + 2, reloaded + 2),
        "two saves that changed the sources, one that did not:\n{}",
        server.log()
    );

    // A renamed tool: the client is told, and sees the new name.
    edit(&lib, "fn hello(", "fn greet(");
    edit(&lib, "tools: [hello]", "tools: [greet]");
    let seen = server.wait_for_list_change_within(seen, REBUILD).await;
    assert_eq!(server.tool_names().await, ["greet"]);
    let result = server.call("greet", ada.clone()).await;
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(text(&result), "Howdy, Ada!");

    // A save that does not compile: the last good build keeps serving.
    save(&lib, "this is not rust");
    server
        .wait_until_within("a failed build", REBUILD, || {
            server.log().contains("failed in").then_some(())
        })
        .await;
    assert_eq!(text(&server.call("greet", ada).await), "Howdy, Ada!");
    assert_eq!(server.list_changes(), seen);

    let log = server.stop().await;
    assert!(log.contains("warden dev: building hello-dev… ok in"), "{log}");
    assert!(log.contains("the last good build keeps serving"), "{log}");
    // Cargo's own error, as it prints it.
    assert!(log.contains("error"), "{log}");
}
