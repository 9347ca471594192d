//! Run-time list changes, for `test_trigger_tool_change` and
//! `test_trigger_prompt_change`, done the only way a plugin can: Warden reads
//! a plugin's lists at load, and reloads a folder plugin when a file inside
//! its folder changes. So the trigger tools toggle a marker file in `/state`,
//! a read-write mount of a folder inside the plugin's own folder (see
//! `tests/conformance/run.sh`); after the reload, `list-tools` or
//! `list-prompts` finds the marker and lists one more tool or prompt.

use std::path::PathBuf;

const STATE: &str = "/state";

fn marker(name: &str) -> PathBuf {
    PathBuf::from(STATE).join(name)
}

/// Whether the marker is there (false when `/state` is not mounted).
pub fn present(name: &str) -> bool {
    marker(name).exists()
}

/// Creates the marker if it is absent, removes it if present; says which.
pub fn toggle(name: &str) -> Result<&'static str, String> {
    let path = marker(name);
    let outcome = if path.exists() {
        std::fs::remove_file(&path).map(|()| "removed")
    } else {
        std::fs::write(&path, b"").map(|()| "added")
    };
    outcome.map_err(|e| {
        format!(
            "cannot change {} ({e}); this tool needs a read-write folder mounted at {STATE}, \
             inside the plugin's own folder",
            path.display()
        )
    })
}
