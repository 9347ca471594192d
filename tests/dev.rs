//! `warden dev`: build a plugin crate, serve it, and hot-reload it when its
//! source changes — driven like a developer would, with an editor's saves.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::{Era, connect, is_error, text, warden};

/// The first build compiles wit-bindgen and friends: minutes on a loaded
/// 2-core machine when the shared target folder is cold.
const FIRST_BUILD: Duration = Duration::from_secs(900);
const REBUILD: Duration = Duration::from_secs(300);

fn source(tool: &str, greeting: &str) -> String {
    let wit = xtask::repo_root().join("wit");
    format!(
        r##"wit_bindgen::generate!({{ path: {wit:?}, world: "warden:plugin/tool-plugin" }});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{{CallResult, Content, Error, Tool}};

struct Hello;

impl Guest for Hello {{
    fn list_tools() -> Vec<Tool> {{
        vec![Tool {{
            name: "{tool}".into(),
            title: None,
            description: "Says hello.".into(),
            input_schema: r#"{{"type":"object"}}"#.into(),
            output_schema: None,
            annotations: None,
        }}]
    }}

    fn call_tool(_name: String, _arguments: String) -> Result<CallResult, Error> {{
        Ok(CallResult {{ content: vec![Content::Text("{greeting}".into())], structured_content: None, is_error: false }})
    }}
}}

export!(Hello);
"##
    )
}

/// A tiny plugin crate, as a developer would start one.
fn write_crate(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        r#"[package]
name = "hello-dev"
version = "0.1.0"
edition = "2024"

[lib]
crate-type = ["cdylib"]

[dependencies]
wit-bindgen = "0.61"

[profile.release]
opt-level = "s"
strip = true

# Its own workspace, whatever folder it is in.
[workspace]
"#,
    )
    .unwrap();
    // The test plugins' lock file pins the same wit-bindgen: the build needs
    // no new resolution against the registry.
    std::fs::copy(
        xtask::repo_root().join("tests/plugins/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), source("greet_v1", "hello from v1")).unwrap();
}

/// Saves a file the way many editors do: a new file renamed over the old.
fn save(path: &Path, contents: &str) {
    let temporary = path.with_extension("rs.swp-save");
    std::fs::write(&temporary, contents).unwrap();
    std::fs::rename(&temporary, path).unwrap();
}

#[tokio::test]
async fn editing_the_source_rebuilds_and_hot_reloads_the_tool() {
    let crate_dir = tempfile::Builder::new().prefix("warden-dev-crate-").tempdir().unwrap();
    write_crate(crate_dir.path());
    let cache = tempfile::tempdir().unwrap();
    let mut command = warden();
    command
        .arg("dev")
        .arg(crate_dir.path())
        // Shared across runs, so only the first run compiles the dependencies.
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("dev-guest"))
        .arg("--cache-dir")
        .arg(cache.path());
    let server = connect(command, Era::Handshake, tempfile::NamedTempFile::new().unwrap()).await;

    // The first build runs while the client is connected; the tool appears.
    let seen = server.wait_for_list_change_within(0, FIRST_BUILD).await;
    assert_eq!(server.tool_names().await, ["greet_v1"]);
    assert_eq!(text(&server.call("greet_v1", json!({})).await), "hello from v1");

    // Edit → save → the client sees the new tool.
    save(
        &crate_dir.path().join("src/lib.rs"),
        &source("greet_v2", "hello from v2"),
    );
    let seen = server.wait_for_list_change_within(seen, REBUILD).await;
    assert_eq!(server.tool_names().await, ["greet_v2"]);
    let result = server.call("greet_v2", json!({})).await;
    assert!(!is_error(&result), "{result:?}");
    assert_eq!(text(&result), "hello from v2");

    // A save that does not compile: the last good build keeps serving.
    save(&crate_dir.path().join("src/lib.rs"), "this is not rust");
    server
        .wait_until_within("a failed build", REBUILD, || {
            server.log().contains("failed in").then_some(())
        })
        .await;
    assert_eq!(text(&server.call("greet_v2", json!({})).await), "hello from v2");
    assert_eq!(server.list_changes(), seen);

    let log = server.stop().await;
    assert!(log.contains("warden dev: building hello-dev… ok in"), "{log}");
    assert!(log.contains("the last good build keeps serving"), "{log}");
    // Cargo's own error, as it prints it.
    assert!(log.contains("error"), "{log}");
}
