//! Running `warden` inside a Linux namespace of the test's own (a mount
//! namespace to bind-mount or mount a small tmpfs in), where the machine
//! allows it.

use std::path::Path;
use std::process::Stdio;

/// Whether this machine lets the test run `unshare ARGS`.
pub fn can_unshare(args: &[&str]) -> bool {
    std::process::Command::new("unshare")
        .args(args)
        .arg("true")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `warden` run through `sh -c SCRIPT` inside `unshare ARGS`; the script
/// ends with `exec "$0" "$@"`, so the process (and its pid) is warden's.
pub fn warden_in(unshare: &[&str], script: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("unshare");
    command
        .args(unshare)
        .args([
            "sh",
            "-c",
            &format!("{script} && exec \"$0\" \"$@\""),
            env!("CARGO_BIN_EXE_warden"),
        ])
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("warden-test-cache"),
        );
    command
}
