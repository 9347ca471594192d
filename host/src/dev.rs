//! `warden dev PATH`: the plugin development loop. Builds the plugin's crate
//! for `wasm32-wasip2`, stages the component in a private plugins folder,
//! serves it (with `--plugins DIR` beside it) over stdio, and rebuilds when
//! its sources change; the watcher and reconciler of `serve` do the rest.
//! A failed build leaves the last good component staged, so it keeps serving.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use notify::RecursiveMode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cli::DevArgs;
use crate::serve::{Host, HostConfig};
use crate::watcher::{self, Batch};

/// The target plugins are built for: it emits a component directly.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// Settings of an outer cargo run (`cargo run -- dev`, a test) that must not
/// leak into the plugin's build: they name the host's target dir or target,
/// add host rustc flags, or hand over a jobserver the child cannot use.
const LEAKY_ENV: &[&str] = &[
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_BUILD_DIR",
    "CARGO_BUILD_TARGET",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];

/// Files in the crate's own folder whose change means a rebuild; everything
/// under `src/` and `wit/` does too.
const CRATE_FILES: &[&str] = &["Cargo.toml", "build.rs", "warden.toml"];

pub async fn run(args: DevArgs) -> Result<()> {
    let crate_dir = watcher::canonical(&args.path);
    if !crate_dir.join("Cargo.toml").is_file() {
        bail!(
            "{} is not a Rust crate (no Cargo.toml); `warden dev` takes the plugin's source folder",
            crate_dir.display()
        );
    }
    let package = Package::read(&crate_dir)?;
    let staging = Staging::create(&package.plugin_name)?;
    let build = Build {
        crate_dir: crate_dir.clone(),
        package,
        target_dir: args.target_dir.clone(),
        staging: staging.dir.clone(),
    };

    // Watch the sources before the first build, so no edit is missed.
    let mut targets = vec![(crate_dir.clone(), RecursiveMode::NonRecursive)];
    for sub in ["src", "wit"] {
        if crate_dir.join(sub).is_dir() {
            targets.push((crate_dir.join(sub), RecursiveMode::Recursive));
        }
    }
    let (_source_watcher, mut edits) = watcher::watch(&targets, watcher::DEBOUNCE)?;

    let mut roots = vec![staging.dir.clone()];
    roots.extend(args.plugins.clone());
    let host = Host::start(HostConfig {
        roots,
        watch: true,
        cache: args.cache.clone(),
        audit_log: args.audit_log.clone(),
        subscriptions: Default::default(),
    })
    .await?;

    // Builds run one at a time, in this task; edits made during a build are
    // picked up by the next one. The first build starts right away while
    // the client connects: the tool appears (with `list_changed`) when it is ready.
    let builder = tokio::spawn(async move {
        build.run().await;
        while let Some(batch) = edits.recv().await {
            let mut relevant = build.is_relevant(&batch);
            while let Ok(more) = edits.try_recv() {
                relevant |= build.is_relevant(&more);
            }
            if relevant {
                build.run().await;
            }
        }
    });
    let served = host.serve_stdio().await;
    builder.abort();
    drop(staging);
    served
}

/// The plugin crate's package, as cargo describes it.
struct Package {
    id: String,
    name: String,
    /// The name the plugin is served under: the package name, made valid.
    plugin_name: String,
}

impl Package {
    fn read(crate_dir: &Path) -> Result<Self> {
        let output = cargo()
            .current_dir(crate_dir)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .context("cannot run `cargo metadata`; is cargo installed?")?;
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
        let name = package["name"]
            .as_str()
            .context("a package without a name")?
            .to_string();
        let plugin_name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(crate::naming::MAX_NAME_LEN)
            .collect();
        Ok(Self {
            id: package["id"].as_str().unwrap_or_default().to_string(),
            name,
            plugin_name,
        })
    }
}

/// A private plugins folder for the built component, removed on exit.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn create(name: &str) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("warden-dev-{}-{name}", std::process::id()));
        // A leftover of an earlier run with the same process id.
        let _ = std::fs::remove_dir_all(&dir);
        // Created fresh, never reused: a folder someone else made under this
        // name (or a symlink) is refused rather than served from.
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&dir)
            .with_context(|| format!("cannot create the staging folder {}", dir.display()))?;
        Ok(Self {
            dir: watcher::canonical(&dir),
        })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Build {
    crate_dir: PathBuf,
    package: Package,
    target_dir: Option<PathBuf>,
    staging: PathBuf,
}

impl Build {
    fn is_relevant(&self, batch: &Batch) -> bool {
        batch.rescan
            || batch.paths.iter().any(|path| {
                let Ok(relative) = path.strip_prefix(&self.crate_dir) else {
                    return false;
                };
                let mut parts = relative.components().map(|c| c.as_os_str().to_string_lossy());
                match (parts.next(), parts.next()) {
                    (Some(dir), Some(_)) => dir == "src" || dir == "wit",
                    (Some(file), None) => CRATE_FILES.contains(&file.as_ref()),
                    _ => false,
                }
            })
    }

    /// Builds and stages, with a progress line on stderr. Failures are
    /// reported there; the last good component stays staged.
    async fn run(&self) {
        let started = Instant::now();
        eprintln!("warden dev: building {}…", self.package.name);
        let result = match self.build().await {
            Ok(wasm) => self.stage(&wasm),
            Err(error) => Err(error),
        };
        let elapsed = started.elapsed().as_secs_f64();
        match result {
            Ok(()) => eprintln!("warden dev: building {}… ok in {elapsed:.1}s", self.package.name),
            Err(error) => eprintln!(
                "warden dev: building {}… failed in {elapsed:.1}s: {error:#}; the last good build keeps serving",
                self.package.name
            ),
        }
    }

    /// Runs cargo; returns the component it produced. Cargo's progress and
    /// rendered errors go to stderr; its JSON messages (stdout) are read here.
    async fn build(&self) -> Result<PathBuf> {
        ensure_guest_target(&self.crate_dir).await?;
        let mut command = tokio::process::Command::from(cargo());
        command
            .current_dir(&self.crate_dir)
            .args(["build", "--release", "--target", GUEST_TARGET])
            .arg("--message-format=json-render-diagnostics")
            .arg("--manifest-path")
            .arg(self.crate_dir.join("Cargo.toml"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        if let Some(dir) = &self.target_dir {
            command.arg("--target-dir").arg(dir);
        }
        let mut child = command.spawn().context("cannot start `cargo build`")?;
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        let mut wasm = None;
        while let Some(line) = lines.next_line().await.context("reading cargo's messages")? {
            match serde_json::from_str::<Value>(&line) {
                Ok(message) => wasm = self.artifact(&message).or(wasm),
                // A build script printing: keep it off stdout, the protocol.
                Err(_) => eprintln!("{line}"),
            }
        }
        let status = child.wait().await.context("waiting for cargo build")?;
        if !status.success() {
            bail!("cargo build failed ({status})");
        }
        wasm.context("cargo built no .wasm for the package; is it crate-type = [\"cdylib\"]?")
    }

    /// The component in a `compiler-artifact` message for the package's cdylib.
    fn artifact(&self, message: &Value) -> Option<PathBuf> {
        if message["reason"] != "compiler-artifact" || message["package_id"] != self.package.id.as_str() {
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

    /// Copies the component (and the crate's `warden.toml`, as its manifest)
    /// into the staging folder: manifest first, each through a temporary
    /// file and a rename, so the server never reads half a file.
    fn stage(&self, wasm: &Path) -> Result<()> {
        let name = &self.package.plugin_name;
        let manifest = self.crate_dir.join("warden.toml");
        let staged_manifest = self.staging.join(format!("{name}.toml"));
        if manifest.is_file() {
            install(&manifest, &staged_manifest)?;
        } else if staged_manifest.exists() {
            std::fs::remove_file(&staged_manifest)
                .with_context(|| format!("removing {}", staged_manifest.display()))?;
        }
        install(wasm, &self.staging.join(format!("{name}.wasm")))
    }
}

/// Copies `from` to `to` through a hidden temporary file and a rename;
/// leaves `to` alone when its content is already the same.
fn install(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("reading {}", from.display()))?;
    if std::fs::read(to).is_ok_and(|existing| existing == bytes) {
        return Ok(());
    }
    let file_name = to.file_name().context("a destination without a file name")?;
    let temporary = to.with_file_name(format!(".{}.tmp", file_name.to_string_lossy()));
    std::fs::write(&temporary, &bytes).with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, to).with_context(|| format!("renaming {} into place", to.display()))
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
        .context("cannot run rustc; is the Rust toolchain installed?")?;
    let path = String::from_utf8_lossy(&libdir.stdout).trim().to_string();
    if libdir.status.success() && !path.is_empty() && Path::new(&path).is_dir() {
        return Ok(());
    }
    eprintln!("warden dev: installing the {GUEST_TARGET} target (rustup target add {GUEST_TARGET})");
    let status = tokio::process::Command::new("rustup")
        .current_dir(crate_dir)
        .args(["target", "add", GUEST_TARGET])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .await
        .context("cannot run rustup; install the target with `rustup target add wasm32-wasip2`")?;
    if !status.success() {
        bail!("`rustup target add {GUEST_TARGET}` failed ({status})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sources_and_crate_files_trigger_a_build() {
        let build = Build {
            crate_dir: PathBuf::from("/c"),
            package: Package {
                id: "id".into(),
                name: "hello".into(),
                plugin_name: "hello".into(),
            },
            target_dir: None,
            staging: PathBuf::from("/s"),
        };
        let batch = |paths: &[&str]| Batch {
            paths: paths.iter().map(PathBuf::from).collect(),
            rescan: false,
        };
        assert!(build.is_relevant(&batch(&["/c/src/lib.rs"])));
        assert!(build.is_relevant(&batch(&["/c/wit/plugin.wit"])));
        assert!(build.is_relevant(&batch(&["/c/Cargo.toml"])));
        assert!(build.is_relevant(&batch(&["/c/warden.toml"])));
        assert!(!build.is_relevant(&batch(&["/c/Cargo.lock"])));
        assert!(!build.is_relevant(&batch(&["/c/target"])));
        assert!(!build.is_relevant(&batch(&["/c/README.md", "/elsewhere/src/x.rs"])));
    }
}
