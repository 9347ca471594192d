//! Rust projects: a crate built with cargo for `wasm32-wasip2`, which emits a
//! component directly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{BuildOptions, Project};

/// The target plugins are built for: it emits a component directly.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

// LEAKY_ENV: the variables a guest build must not inherit, the list xtask uses too.
include!("../../../xtask/src/leaky_env.rs");

/// The crate's package, as cargo describes it.
pub struct Package {
    pub id: String,
    pub name: String,
}

impl Package {
    pub fn read(crate_dir: &Path) -> Result<Self> {
        let output = cargo()
            .current_dir(crate_dir)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .context("cannot run `cargo metadata`; is cargo installed? (https://rustup.rs)")?;
        if !output.status.success() {
            bail!("`cargo metadata` failed in {} ({})", crate_dir.display(), output.status);
        }
        let metadata: Value = serde_json::from_slice(&output.stdout).context("reading cargo metadata's output")?;
        let manifest = crate_dir.join("Cargo.toml");
        let package = metadata["packages"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["manifest_path"].as_str().is_some_and(|m| Path::new(m) == manifest))
            .with_context(|| format!("cargo metadata does not list the package of {}", manifest.display()))?;
        let has_cdylib = package["targets"].as_array().into_iter().flatten().any(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"))
        });
        if !has_cdylib {
            bail!(
                "{} builds no cdylib; a plugin crate needs `[lib] crate-type = [\"cdylib\"]`",
                manifest.display()
            );
        }
        Ok(Self {
            id: package["id"].as_str().unwrap_or_default().to_string(),
            name: package["name"]
                .as_str()
                .context("a package without a name")?
                .to_string(),
        })
    }
}

/// `warden dev`'s cargo profile, defined on the command line: the crate's
/// own `dev` profile, optimised a little, without debug information. An
/// edit of a small plugin compiles in about 0.35 s instead of release's
/// 0.8–0.9 s (opt-level "s", one codegen unit), and the component stays
/// small (debug information would make it 11 MB to compile).
const DEV_PROFILE: &[&str] = &[
    "--profile",
    "warden-dev",
    "--config",
    "profile.warden-dev.inherits=\"dev\"",
    "--config",
    "profile.warden-dev.opt-level=1",
    "--config",
    "profile.warden-dev.debug=0",
    "--config",
    "profile.warden-dev.strip=true",
];

/// Runs `cargo build --release --target wasm32-wasip2` (`warden dev`: the
/// `warden-dev` profile); returns the component it produced. Cargo's
/// progress and rendered errors go to stderr; its JSON messages (stdout)
/// are read here.
pub async fn build(project: &Project, options: &BuildOptions) -> Result<PathBuf> {
    ensure_guest_target(&project.dir).await?;
    let mut command = tokio::process::Command::from(cargo());
    let profile: &[&str] = if options.dev { DEV_PROFILE } else { &["--release"] };
    command
        .current_dir(&project.dir)
        .arg("build")
        .args(profile)
        .args(["--target", GUEST_TARGET])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(project.dir.join("Cargo.toml"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    if let Some(dir) = &options.target_dir {
        command.arg("--target-dir").arg(dir);
    }
    let mut child = command.spawn().context("cannot start `cargo build`")?;
    let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    let package_id = project.package_id.as_deref().unwrap_or_default();
    let mut wasm = None;
    while let Some(line) = lines.next_line().await.context("reading cargo's messages")? {
        match serde_json::from_str::<Value>(&line) {
            Ok(message) => wasm = artifact(&message, package_id).or(wasm),
            // A build script printing: keep it off stdout, the protocol.
            Err(_) => crate::log_writer::say(format_args!("{line}")),
        }
    }
    let status = child.wait().await.context("waiting for cargo build")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    wasm.context("cargo built no .wasm for the package; is it crate-type = [\"cdylib\"]?")
}

/// The component in a `compiler-artifact` message for the package's cdylib.
fn artifact(message: &Value, package_id: &str) -> Option<PathBuf> {
    if message["reason"] != "compiler-artifact" || message["package_id"] != package_id {
        return None;
    }
    let cdylib = message["target"]["kind"]
        .as_array()?
        .iter()
        .any(|kind| kind == "cdylib");
    if !cdylib {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|file| file.ends_with(".wasm"))
        .map(PathBuf::from)
}

/// `cargo`, cleaned of an outer cargo run's settings.
fn cargo() -> std::process::Command {
    let mut command = std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo")));
    for name in LEAKY_ENV {
        command.env_remove(name);
    }
    command
}

/// Installs the wasm target when the crate's toolchain lacks it.
async fn ensure_guest_target(crate_dir: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let libdir = tokio::process::Command::new(rustc)
        .current_dir(crate_dir)
        .args(["--print", "target-libdir", "--target", GUEST_TARGET])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .await
        .context("cannot run rustc; is the Rust toolchain installed? (https://rustup.rs)")?;
    let path = String::from_utf8_lossy(&libdir.stdout).trim().to_string();
    if libdir.status.success() && !path.is_empty() && Path::new(&path).is_dir() {
        return Ok(());
    }
    crate::log_writer::say(format_args!(
        "warden: installing the {GUEST_TARGET} target (rustup target add {GUEST_TARGET})"
    ));
    let status = tokio::process::Command::new("rustup")
        .current_dir(crate_dir)
        .args(["target", "add", GUEST_TARGET])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .await
        .with_context(|| format!("cannot run rustup; install the target with `rustup target add {GUEST_TARGET}`"))?;
    if !status.success() {
        bail!("`rustup target add {GUEST_TARGET}` failed ({status})");
    }
    Ok(())
}
