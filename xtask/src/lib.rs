//! Builds Warden's guest workspaces (`plugins/`, `tests/plugins/`) into WebAssembly
//! components and stages them in a plugins folder.
//!
//! Host tests use it too: `build_guests(&repo_root().join("tests/plugins"))`, then
//! `stage` into a temporary plugins folder.

pub mod component;
pub mod layers;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target every guest is built for: it emits a component directly.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

// LEAKY_ENV: the variables a guest build must not inherit (shared with the warden crate).
include!("leaky_env.rs");

/// One built guest plugin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guest {
    /// The cargo package name, e.g. `bad-decl`; the plugin is staged as `<name>.wasm`.
    pub name: String,
    /// The component cargo produced.
    pub wasm: PathBuf,
    /// The package's folder, where an optional `warden.toml` manifest lives.
    pub crate_dir: PathBuf,
}

/// The repository root (the parent of this crate's folder).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the repository root")
        .to_path_buf()
}

/// Where guests are built: apart from the host's target dir, shared by all guest workspaces.
pub fn guest_target_dir() -> PathBuf {
    repo_root().join("target").join("guests")
}

/// A `cargo` command (the one running us, when there is one) cleaned of the outer build's
/// settings.
fn cargo() -> Command {
    let mut command = host_cargo();
    for name in LEAKY_ENV {
        command.env_remove(name);
    }
    command
}

/// A `cargo` command for building the host, without the variables `cargo run` set for xtask
/// itself (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, …). ring's build script reruns when
/// `CARGO_MANIFEST_DIR` differs, so with them ring and every crate above it were rebuilt
/// unlike a plain `cargo build` — with other ThinLTO symbol suffixes, which
/// `host/link-order.txt` then missed (163 of its 8 012 functions), and twice the rebuild.
pub fn host_cargo() -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if ["CARGO_MANIFEST_", "CARGO_PKG_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || ["CARGO_CRATE_NAME", "CARGO_BIN_NAME", "CARGO_PRIMARY_PACKAGE"].contains(&name.as_ref())
        {
            command.env_remove(name.as_ref());
        }
    }
    command
}

/// Builds every cdylib of the guest workspace at `workspace_dir` in release mode for
/// `wasm32-wasip2`, returning the components sorted by package name. Cargo's human output
/// goes to stderr; nothing is written to stdout.
pub fn build_guests(workspace_dir: &Path) -> Result<Vec<Guest>> {
    build(workspace_dir).with_context(|| format!("building the guest workspace {}", workspace_dir.display()))
}

/// Installs the guest target when the toolchain lacks it. rustup installs the
/// targets named in `rust-toolchain.toml` only with a new toolchain, not into
/// one that is already there, so a fresh machine with stable installed needs this.
fn ensure_guest_target(workspace_dir: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let libdir = Command::new(rustc)
        .current_dir(workspace_dir)
        .args(["--print", "target-libdir", "--target", GUEST_TARGET])
        .stderr(Stdio::null())
        .output()
        .context("running rustc --print target-libdir")?;
    let path = String::from_utf8_lossy(&libdir.stdout).trim().to_string();
    if libdir.status.success() && !path.is_empty() && Path::new(&path).is_dir() {
        return Ok(());
    }
    eprintln!("xtask: installing the {GUEST_TARGET} target (rustup target add {GUEST_TARGET})");
    let status = Command::new("rustup")
        .current_dir(workspace_dir)
        .args(["target", "add", GUEST_TARGET])
        .stdout(Stdio::null())
        .status()
        .context("running rustup; install the target by hand with `rustup target add wasm32-wasip2`")?;
    if !status.success() {
        bail!("`rustup target add {GUEST_TARGET}` failed ({status})");
    }
    Ok(())
}

fn build(workspace_dir: &Path) -> Result<Vec<Guest>> {
    ensure_guest_target(workspace_dir)?;
    let manifest = workspace_dir.join("Cargo.toml");
    let members = workspace_members(workspace_dir, &manifest)?;

    let mut child = cargo()
        .current_dir(workspace_dir)
        .args(["build", "--release", "--target", GUEST_TARGET])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(guest_target_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting cargo build")?;

    let stdout = child.stdout.take().expect("stdout is piped");
    let mut guests = Vec::new();
    let mut read_error = None;
    for line in BufReader::new(stdout).lines() {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                read_error = Some(error);
                break;
            }
        };
        match serde_json::from_str::<Value>(&line) {
            Ok(message) => guests.extend(component(&message, &members)),
            // Not a cargo message (say, a build script printing): keep it off our stdout.
            Err(_) => eprintln!("{line}"),
        }
    }
    let status = child.wait().context("waiting for cargo build")?;
    if let Some(error) = read_error {
        return Err(error).context("reading cargo's messages");
    }
    if !status.success() {
        bail!("cargo build failed ({status}); its errors are above");
    }
    if guests.is_empty() {
        bail!("cargo built no cdylib .wasm files: is every guest crate-type = [\"cdylib\"]?");
    }
    guests.sort_by(|a: &Guest, b: &Guest| a.name.cmp(&b.name));
    Ok(guests)
}

/// The workspace's packages, by package id: (name, folder).
fn workspace_members(workspace_dir: &Path, manifest: &Path) -> Result<HashMap<String, (String, PathBuf)>> {
    let output = cargo()
        .current_dir(workspace_dir)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .arg("--manifest-path")
        .arg(manifest)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("starting cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed ({})", output.status);
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).context("reading cargo metadata's output")?;
    let mut members = HashMap::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let (Some(id), Some(name), Some(manifest_path)) = (
            package["id"].as_str(),
            package["name"].as_str(),
            package["manifest_path"].as_str(),
        ) else {
            bail!("cargo metadata listed a package without id, name or manifest_path");
        };
        let crate_dir = Path::new(manifest_path)
            .parent()
            .context("a package manifest without a folder")?;
        members.insert(id.to_string(), (name.to_string(), crate_dir.to_path_buf()));
    }
    Ok(members)
}

/// The guest in a `compiler-artifact` message for a workspace cdylib, if it is one.
fn component(message: &Value, members: &HashMap<String, (String, PathBuf)>) -> Option<Guest> {
    if message["reason"] != "compiler-artifact" {
        return None;
    }
    let (name, crate_dir) = members.get(message["package_id"].as_str()?)?;
    let kinds = message["target"]["kind"].as_array()?;
    if !kinds.iter().any(|kind| kind == "cdylib") {
        return None;
    }
    let wasm = message["filenames"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|file| file.ends_with(".wasm"))?;
    Some(Guest {
        name: name.clone(),
        wasm: PathBuf::from(wasm),
        crate_dir: crate_dir.clone(),
    })
}

/// Puts each guest in the plugins folder `dir` as `<name>.wasm`, with its
/// `<crate_dir>/warden.toml` as `<name>.toml` when it has one (a stale `<name>.toml` is
/// removed when it has none). Files are written beside their final name and renamed into
/// place, manifest first, so a watching Warden never reads half a file or a component
/// without its grants; files whose content is unchanged are left alone.
///
/// In a `warden.toml`, `{data}` stands for a folder made for the plugin
/// beside the staging folder (`<dir>-data/<name>`), so an example that needs
/// a filesystem grant works as staged.
pub fn stage(guests: &[Guest], dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for guest in guests {
        let manifest = guest.crate_dir.join("warden.toml");
        let staged_manifest = dir.join(format!("{}.toml", guest.name));
        if manifest.is_file() {
            // The repository's own example manifest, not an operator's file.
            #[allow(clippy::disallowed_methods)]
            let text = fs::read_to_string(&manifest).with_context(|| format!("reading {}", manifest.display()))?;
            let text = if text.contains("{data}") {
                let data = dir.with_file_name(format!(
                    "{}-data",
                    dir.file_name().map_or("plugins".into(), |n| n.to_string_lossy())
                ));
                let data = data.join(&guest.name);
                fs::create_dir_all(&data).with_context(|| format!("creating {}", data.display()))?;
                // Mounts must name folders by their real path (no symlinks).
                let data = data
                    .canonicalize()
                    .with_context(|| format!("resolving {}", data.display()))?;
                text.replace("{data}", &data.display().to_string())
            } else {
                text
            };
            let generated = dir.join(format!(".{}.toml.generated", guest.name));
            fs::write(&generated, text).with_context(|| format!("writing {}", generated.display()))?;
            let installed = install(&generated, &staged_manifest);
            let _ = fs::remove_file(&generated);
            installed?;
        } else if staged_manifest.exists() {
            fs::remove_file(&staged_manifest)
                .with_context(|| format!("removing the stale {}", staged_manifest.display()))?;
        }
        install(&guest.wasm, &dir.join(format!("{}.wasm", guest.name)))?;
    }
    Ok(())
}

/// Copies `from` to `to` through a temporary file in `to`'s folder and a rename.
// A guest cargo just built (or a manifest just generated), into target/:
// a build tool's own outputs, not an operator's files.
#[allow(clippy::disallowed_methods)]
fn install(from: &Path, to: &Path) -> Result<()> {
    let bytes = fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    if fs::read(to).is_ok_and(|existing| existing == bytes) {
        return Ok(());
    }
    let file_name = to.file_name().context("a destination without a file name")?;
    let temporary = to.with_file_name(format!(".{}.{}.tmp", file_name.to_string_lossy(), std::process::id()));
    fs::write(&temporary, &bytes).with_context(|| format!("writing {}", temporary.display()))?;
    fs::rename(&temporary, to).map_err(|error| {
        let _ = fs::remove_file(&temporary);
        anyhow::Error::new(error).context(format!("renaming {} into place", to.display()))
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::*;
    use std::time::{SystemTime, UNIX_EPOCH};

    fn scratch(label: &str) -> PathBuf {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("xtask-{label}-{}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn stages_components_and_manifests() {
        let root = scratch("stage");
        let with = root.join("with");
        let without = root.join("without");
        fs::create_dir_all(&with).unwrap();
        fs::create_dir_all(&without).unwrap();
        fs::write(with.join("with.wasm"), b"\0asm one").unwrap();
        fs::write(with.join("warden.toml"), "[limits]\n").unwrap();
        fs::write(without.join("without.wasm"), b"\0asm two").unwrap();
        let guests = [
            Guest {
                name: "with-manifest".into(),
                wasm: with.join("with.wasm"),
                crate_dir: with.clone(),
            },
            Guest {
                name: "bare".into(),
                wasm: without.join("without.wasm"),
                crate_dir: without.clone(),
            },
        ];
        let staged = root.join("staged");
        fs::create_dir_all(&staged).unwrap();
        fs::write(staged.join("bare.toml"), "stale").unwrap();

        stage(&guests, &staged).unwrap();
        assert_eq!(
            names(&staged),
            ["bare.wasm", "with-manifest.toml", "with-manifest.wasm"]
        );
        assert_eq!(fs::read(staged.join("bare.wasm")).unwrap(), b"\0asm two");
        assert_eq!(
            fs::read_to_string(staged.join("with-manifest.toml")).unwrap(),
            "[limits]\n"
        );

        // Again, with one component changed: replaced in place, nothing left behind.
        fs::write(without.join("without.wasm"), b"\0asm three").unwrap();
        stage(&guests, &staged).unwrap();
        assert_eq!(fs::read(staged.join("bare.wasm")).unwrap(), b"\0asm three");
        assert_eq!(
            names(&staged),
            ["bare.wasm", "with-manifest.toml", "with-manifest.wasm"]
        );

        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn stage_names_the_missing_file() {
        let root = scratch("missing");
        let guest = Guest {
            name: "ghost".into(),
            wasm: root.join("nowhere.wasm"),
            crate_dir: root.clone(),
        };
        let error = stage(&[guest], &root.join("staged")).unwrap_err();
        assert!(format!("{error:#}").contains("nowhere.wasm"), "{error:#}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    #[ignore = "runs a release cargo build of tests/plugins for wasm32-wasip2"]
    fn builds_the_test_plugins() {
        let guests = build_guests(&repo_root().join("tests").join("plugins")).unwrap();
        let names: Vec<&str> = guests.iter().map(|guest| guest.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bad-decl",
                "bad-schema",
                "bench",
                "clash",
                "conformance",
                "conformance-interactive",
                "dup-tools",
                "full",
                "future-abi",
                "hostile",
                "load-trap",
                "misbehave",
                "prefixed",
                "reload-v1",
                "reload-v2"
            ]
        );
        for guest in &guests {
            let bytes = fs::read(&guest.wasm).unwrap();
            // A component, not a core module: version 0x0d, layer 1.
            assert_eq!(
                bytes[..8],
                [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00],
                "{guest:?}"
            );
            assert!(guest.crate_dir.join("Cargo.toml").is_file(), "{guest:?}");
        }
        let staged = scratch("test-plugins");
        stage(&guests, &staged).unwrap();
        assert!(staged.join("bad-decl.wasm").is_file());
        fs::remove_dir_all(&staged).unwrap();
    }

    #[test]
    fn root_holds_the_contract() {
        assert!(repo_root().join("wit/v0.1.0/plugin.wit").is_file());
    }

    /// The Rust SDK generates its bindings from its own copy of the contract (a published
    /// crate cannot reach outside its folder): the copy must be the contract it implements,
    /// `warden:plugin@0.3.0` (`wit/v0.3.0/plugin.wit`), byte for byte.
    #[test]
    fn the_rust_sdk_carries_the_contract_unchanged() {
        let root = repo_root();
        let contract = fs::read(root.join("wit/v0.3.0/plugin.wit")).unwrap();
        let copy = fs::read(root.join("sdk/rust/warden-plugin/wit/plugin.wit")).unwrap();
        assert!(
            contract == copy,
            "sdk/rust/warden-plugin/wit/plugin.wit differs from wit/v0.3.0/plugin.wit; \
             copy it again: cp wit/v0.3.0/plugin.wit sdk/rust/warden-plugin/wit/"
        );
    }
}
