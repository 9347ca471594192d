//! Tool annotations are served as the grants make them true (see
//! `crates/plugins/src/annotations.rs`): exact values over `tools/list` from the real
//! binary, for a plugin whose author claims annotations (`full`: read-only,
//! idempotent, closed world) and one that declares none (`prefixed`), under
//! no grants, a writable mount and an HTTP host.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use serde_json::{Value, json};
use support::{Era, PluginDir, Server, serve};

/// What `full`'s author claims for `add`.
const CLAIMED: &str =
    r#"{"title":"Add","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}"#;

/// `full` and `prefixed` (its tool named `plain_echo`), each with its
/// manifest's grants section `grants` (`{dir}` becomes a folder of its own).
fn folder(grants: &str, folders: &tempfile::TempDir) -> PluginDir {
    let dir = PluginDir::with(&["full", "prefixed"]);
    for plugin in ["full", "prefixed"] {
        let data = folders.path().join(plugin);
        std::fs::create_dir_all(&data).unwrap();
        let grants = grants.replace("{dir}", &data.display().to_string());
        let env = if plugin == "prefixed" {
            "[environment]\nset = { TOOL_PREFIX = \"plain\" }\n"
        } else {
            ""
        };
        dir.write(&format!("{plugin}.toml"), format!("{grants}{env}"));
    }
    dir
}

/// The served annotations of each tool, by name.
async fn served(server: &Server) -> Vec<(String, Value)> {
    let tools = server.client.list_all_tools().await.expect("tools/list works");
    tools
        .into_iter()
        .map(|t| (t.name.to_string(), serde_json::to_value(t.annotations).unwrap()))
        .collect()
}

fn corrections(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(": annotation ")).collect()
}

#[tokio::test]
async fn annotations_are_never_less_cautious_than_the_grants() {
    let folders = tempfile::tempdir().unwrap();
    let claimed: Value = serde_json::from_str(CLAIMED).unwrap();

    // No grant that reaches outside (an environment variable and a read-only
    // mount are neither): what the author claims is true, and a plugin
    // without annotations gets the same, derived ones.
    let dir = folder(
        "[filesystem]\n\"{dir}\" = { mount = \"/data\", access = \"read-only\" }\n",
        &folders,
    );
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    assert_eq!(
        served(&server).await,
        [
            ("add".to_string(), claimed.clone()),
            (
                "plain_echo".to_string(),
                json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
            ),
        ]
    );
    let log = server.stop().await;
    assert_eq!(corrections(&log), Vec::<&str>::new(), "nothing to correct:\n{log}");

    // A writable mount: a call can change files, so `readOnlyHint: true` is
    // corrected; the author's destructive/idempotent claims stay; the world
    // is still closed.
    let dir = folder(
        "[filesystem]\n\"{dir}\" = { mount = \"/data\", access = \"read-write\" }\n",
        &folders,
    );
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    assert_eq!(
        served(&server).await,
        [
            (
                "add".to_string(),
                json!({"title": "Add", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true,
                       "openWorldHint": false})
            ),
            ("plain_echo".to_string(), json!({"openWorldHint": false})),
        ]
    );
    let log = server.stop().await;
    let full_data = folders.path().join("full");
    let expected = format!(
        "plugin `full`, tool `add`: annotation readOnlyHint claimed true, served false: it can change things \
         outside its sandbox through filesystem.\"{}\" (read-write)",
        full_data.display()
    );
    let found = corrections(&log);
    assert_eq!(found.len(), 1, "one correction, logged once:\n{log}");
    assert!(found[0].contains("WARN") && found[0].ends_with(&expected), "{log}");

    // An HTTP host: the open world, and a request may change remote state.
    let dir = folder("[network]\nallow = [\"api.example.com\"]\n", &folders);
    let server = serve(dir.path(), Era::Stateless, &[]).await;
    assert_eq!(
        served(&server).await,
        [
            (
                "add".to_string(),
                json!({"title": "Add", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true,
                       "openWorldHint": true})
            ),
            ("plain_echo".to_string(), json!({"openWorldHint": true})),
        ]
    );
    let log = server.stop().await;
    let found = corrections(&log);
    assert_eq!(found.len(), 2, "{log}");
    assert!(
        found[0].ends_with(
            "plugin `full`, tool `add`: annotation readOnlyHint claimed true, served false: it can change things \
             outside its sandbox through network.allow \"api.example.com\""
        ),
        "{log}"
    );
    assert!(
        found[1].ends_with(
            "plugin `full`, tool `add`: annotation openWorldHint claimed false, served true: it can reach the \
             network through network.allow \"api.example.com\""
        ),
        "{log}"
    );
}

#[tokio::test]
async fn a_grant_that_changes_the_annotations_is_announced() {
    let folders = tempfile::tempdir().unwrap();
    let dir = folder("", &folders);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    let claimed: Value = serde_json::from_str(CLAIMED).unwrap();
    assert_eq!(served(&server).await[0], ("add".to_string(), claimed));

    // Only the manifest changes: the tools are the same, but what clients
    // may assume about them is not, so they are told to list again.
    dir.replace("full.toml", "[network]\nallow = [\"api.example.com\"]\n");
    server.wait_for_list_change(0).await;
    assert_eq!(
        served(&server).await[0],
        (
            "add".to_string(),
            json!({"title": "Add", "readOnlyHint": false, "destructiveHint": false, "idempotentHint": true,
                   "openWorldHint": true})
        )
    );
    server.stop().await;
}
