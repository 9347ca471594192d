//! `cargo xtask plugins`: build the example plugins and stage them in
//! `target/plugins/examples`.
//! `cargo xtask run [ARGS...]`: the same, then `warden serve` on that folder with ARGS.
//! `cargo xtask bench [--quick] [--only SECTIONS]`: build Warden, the native
//! baseline and the benchmark plugins in release, then run the side-by-side
//! benchmark and the soak.
//! `cargo xtask layers`: check that the crates depend only downward, that no
//! modules import each other and that no source file is over 600 lines.
//!
//! Only Warden itself writes to stdout: on the stdio transport, stdout is the protocol.

use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode, ExitStatus};
use xtask::{build_guests, host_cargo, repo_root, stage};

const USAGE: &str = "\
usage: cargo xtask plugins          build the example plugins into target/plugins/examples
       cargo xtask run [ARGS...]    the same, then run `warden serve` on them with ARGS
       cargo xtask bench [--quick]  benchmark Warden against a native server (release builds)
       cargo xtask bench --only soak  only the soak (or any of stdio,http,memory,startup,breakdown,soak,devloop;
                                      devloop, the plugin author's save-to-answer loop, runs only when named)
       cargo xtask bench --debug    the same on debug builds: checks the benchmark works (figures meaningless)
                                    (WARDEN_BIN=<path>: benchmark that Warden instead of building one)
       cargo xtask layers           check the layering the README's Layout section states";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let command = args.next();
    match command.as_ref().and_then(|c| c.to_str()) {
        Some("plugins") => {
            if let Some(extra) = args.next() {
                bail!("`plugins` takes no arguments, got {extra:?}\n{USAGE}");
            }
            stage_examples()?;
            Ok(ExitCode::SUCCESS)
        }
        Some("run") => {
            let plugins = stage_examples()?;
            // `cargo xtask run -- -v` and `cargo xtask run -v` mean the same.
            let extra: Vec<OsString> = args.skip_while(|a| a == "--").collect();
            serve(plugins, extra)
        }
        Some("bench") => {
            let extra: Vec<OsString> = args.skip_while(|a| a == "--").collect();
            bench(extra)
        }
        Some("layers") => {
            let faults = xtask::layers::check(&repo_root())?;
            for fault in &faults {
                eprintln!("{fault}");
            }
            if faults.is_empty() {
                eprintln!(
                    "layers hold: {} depend only downward; no module cycle; no file over {} lines",
                    xtask::layers::LAYERS.join(" → "),
                    xtask::layers::MAX_LINES
                );
                return Ok(ExitCode::SUCCESS);
            }
            Ok(ExitCode::FAILURE)
        }
        Some("help" | "-h" | "--help") => {
            eprintln!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            eprintln!("{USAGE}");
            Ok(ExitCode::from(2))
        }
    }
}

/// Builds `plugins/` and stages it; returns the folder.
fn stage_examples() -> Result<PathBuf> {
    let root = repo_root();
    let guests = build_guests(&root.join("plugins"))?;
    let dir = root.join("target").join("plugins").join("examples");
    stage(&guests, &dir).with_context(|| format!("staging plugins in {}", dir.display()))?;
    let names: Vec<&str> = guests.iter().map(|guest| guest.name.as_str()).collect();
    eprintln!(
        "xtask: staged {} plugins ({}) in {}",
        guests.len(),
        names.join(", "),
        dir.display()
    );
    Ok(dir)
}

/// Builds what the benchmark compares, in release, then runs it. With
/// `--debug`, builds for debugging instead and runs a quick pass: a check
/// that the benchmark works, whose figures mean nothing.
fn bench(mut extra: Vec<OsString>) -> Result<ExitCode> {
    let debug = extra.iter().any(|a| a == "--debug");
    extra.retain(|a| a != "--debug");
    if debug && !extra.iter().any(|a| a == "--quick") {
        extra.push("--quick".into());
    }
    let root = repo_root();
    let guests = build_guests(&root.join("tests").join("plugins"))?;
    let guest = |name: &str| {
        guests
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.wasm.clone())
            .with_context(|| format!("the test plugins have no `{name}`"))
    };
    let (plugin, prefixed) = (guest("bench")?, guest("prefixed")?);
    // The soak alternates between the two builds of the reload test plugin.
    let (reload_v1, reload_v2) = (guest("reload-v1")?, guest("reload-v2")?);
    let release = root.join("target").join(if debug { "debug" } else { "release" });
    // A Warden built already (CI's, by `cargo test`: its features differ from
    // `--package warden`'s, so building here would compile most of it again).
    // Absolute: the benchmark runs from the repository's root, not from here.
    let given = match std::env::var_os("WARDEN_BIN") {
        Some(path) => Some(
            std::fs::canonicalize(&path)
                .with_context(|| format!("WARDEN_BIN={}: no such Warden binary", PathBuf::from(&path).display()))?,
        ),
        None => None,
    };
    let warden = match &given {
        Some(path) => {
            eprintln!("xtask: benchmarking {} (WARDEN_BIN)", path.display());
            path.clone()
        }
        None => release.join("warden"),
    };
    let packages: &[&str] = if given.is_some() {
        &["warden-bench"]
    } else {
        &["warden", "warden-bench"]
    };
    // Two builds, so the baseline's dependencies' features never leak into Warden's.
    for &package in packages {
        let mut build = host_cargo();
        build.current_dir(&root).args(["build", "--package", package]);
        if !debug {
            build.arg("--release");
        }
        let status = build.status().with_context(|| format!("building {package}"))?;
        if !status.success() {
            bail!("building {package} failed");
        }
    }
    let status = Command::new(release.join("warden-bench"))
        .current_dir(&root)
        .arg("--warden")
        .arg(&warden)
        .arg("--native")
        .arg(release.join("native-mcp"))
        .arg("--plugin")
        .arg(plugin)
        .arg("--prefixed")
        .arg(prefixed)
        .arg("--reload-v1")
        .arg(reload_v1)
        .arg("--reload-v2")
        .arg(reload_v2)
        // The Python and JavaScript SDKs' examples, where their interop
        // scripts built them: the large components of the startup section.
        .args(
            ["python-sdk/csvtools.wasm", "js-sdk/json-tools.wasm"]
                .map(|file| root.join("target").join("plugins").join(file))
                .into_iter()
                .filter(|path| path.exists())
                .flat_map(|path| [OsString::from("--large"), path.into_os_string()]),
        )
        .arg("--out")
        .arg(
            root.join("target")
                .join("bench")
                .join(if debug { "debug-results.json" } else { "results.json" }),
        )
        .args(extra)
        .status()
        .context("running warden-bench")?;
    Ok(exit_code(status))
}

/// Runs Warden on `plugins` with the terminal's stdin, stdout and stderr.
fn serve(plugins: PathBuf, extra: Vec<OsString>) -> Result<ExitCode> {
    let status = host_cargo()
        .current_dir(repo_root())
        .args(["run", "--release", "--package", "warden", "--", "serve", "--plugins"])
        .arg(plugins)
        .args(extra)
        .status()
        .context("starting `cargo run --package warden`")?;
    Ok(exit_code(status))
}

fn exit_code(status: ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
        }
    }
    ExitCode::FAILURE
}
