//! Hot-reload and startup timings against the real binary, printed as a
//! Markdown table:
//!
//! - reload: a plugin file renamed into the watched folder → the client
//!   receives `notifications/tools/list_changed`, for each example plugin,
//!   with a cold cache (bytes never compiled) and a warm one (compiled code
//!   on disk); a removal; and a manifest-only change (written → the new
//!   limit is in effect, seen by polling a call: it sends no notification);
//! - startup: process start → first `tools/list` answered, with 20 plugins,
//!   cold (empty cache folder) and warm.
//!
//! Run: `cargo run --release -p warden --example reload_bench [-- ITERATIONS]`.
//! It builds `target/release/warden` and the guest plugins first.

// A measurement reads the files it is pointed at freely; the one opener
// (bounded_file) is for what Warden serves.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;

const EXAMPLES: &[&str] = &["text", "clock", "notes", "fetch"];
const STARTUP_PLUGINS: usize = 20;
const WAIT: Duration = Duration::from_secs(30);

/// Forwards the arrival time of each `tools/list_changed`.
#[derive(Clone)]
struct Watcher {
    changes: mpsc::UnboundedSender<Instant>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.changes.send(Instant::now());
    }
}

struct Client {
    service: RunningService<RoleClient, Watcher>,
    changes: mpsc::UnboundedReceiver<Instant>,
}

impl Client {
    async fn start(warden: &Path, plugins: &Path, cache: &Path) -> Result<Self> {
        let mut command = tokio::process::Command::new(warden);
        command
            .arg("serve")
            .arg("--plugins")
            .arg(plugins)
            .arg("--cache-dir")
            .arg(cache)
            .env("RUST_LOG", "warn");
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting warden")?;
        let (sender, changes) = mpsc::unbounded_channel();
        let service = Watcher { changes: sender }
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .context("connecting")?;
        Ok(Self { service, changes })
    }

    async fn next_change(&mut self) -> Result<Instant> {
        tokio::time::timeout(WAIT, self.changes.recv())
            .await
            .context("no tools/list_changed within 30 s")?
            .context("the server went away")
    }

    async fn stop(self) -> Result<()> {
        self.service.cancel().await?;
        Ok(())
    }
}

/// Appends a custom section: the component behaves the same, but its
/// sha256 (so its cache key) is new — a never-compiled component.
fn unique(bytes: &[u8], tag: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"warden-bench";
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name);
    payload.extend_from_slice(tag.as_bytes());
    let mut out = bytes.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

fn put(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().context("no file name")?.to_string_lossy().into_owned();
    let temporary = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path)?;
    Ok(())
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Row {
    what: String,
    samples: Vec<Duration>,
}

impl Row {
    fn print(&self) {
        let mut sorted = self.samples.clone();
        sorted.sort();
        let at = |q: f64| millis(sorted[((sorted.len() - 1) as f64 * q).round() as usize]);
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            self.what,
            sorted.len(),
            at(0.5),
            at(0.9),
            millis(sorted[0]),
            millis(*sorted.last().unwrap())
        );
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let iterations: usize = std::env::args().nth(1).map(|n| n.parse()).transpose()?.unwrap_or(15);
    let root = xtask::repo_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "--quiet", "-p", "warden", "--bin", "warden"])
        .status()?;
    if !status.success() {
        bail!("cannot build target/release/warden");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let warden = target.join("release").join("warden");
    let mut guests = std::collections::HashMap::new();
    for workspace in ["plugins", "tests/plugins"] {
        for guest in xtask::build_guests(&root.join(workspace))? {
            guests.insert(guest.name, std::fs::read(&guest.wasm)?);
        }
    }

    let scratch = tempfile::tempdir()?;
    let mut rows = Vec::new();

    // Reloads: one server, one folder, one cache for all of them.
    let plugins = scratch.path().join("plugins");
    let cache = scratch.path().join("cache");
    std::fs::create_dir_all(&plugins)?;
    let mut client = Client::start(&warden, &plugins, &cache).await?;
    for name in EXAMPLES {
        let file = plugins.join(format!("{name}.wasm"));
        let (mut cold, mut warm, mut removed) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..iterations {
            let bytes = unique(&guests[*name], &format!("{i}"));
            for samples in [&mut cold, &mut warm] {
                let written = Instant::now();
                put(&file, &bytes)?;
                samples.push(client.next_change().await? - written);
                let written = Instant::now();
                std::fs::remove_file(&file)?;
                removed.push(client.next_change().await? - written);
            }
        }
        rows.push(Row {
            what: format!("reload `{name}` added, cold cache (compile)"),
            samples: cold,
        });
        rows.push(Row {
            what: format!("reload `{name}` added, warm cache"),
            samples: warm,
        });
        rows.push(Row {
            what: format!("reload `{name}` removed"),
            samples: removed,
        });
    }

    // Manifest only: toggle an output limit; observe the call flip.
    put(&plugins.join("misbehave.wasm"), &guests["misbehave"])?;
    client.next_change().await?;
    let manifest = plugins.join("misbehave.toml");
    let mut manifest_only = Vec::new();
    for i in 0..iterations * 2 {
        let small = i % 2 == 0;
        let limit = if small { "1 KiB" } else { "1 MiB" };
        let written = Instant::now();
        put(&manifest, format!("[limits]\noutput = \"{limit}\"\n").as_bytes())?;
        loop {
            let result = client
                .service
                .call_tool(
                    CallToolRequestParams::new("big")
                        .with_arguments(json!({"bytes": 4000}).as_object().cloned().unwrap_or_default()),
                )
                .await?;
            if (result.is_error == Some(true)) == small {
                break;
            }
            if written.elapsed() > WAIT {
                bail!("the manifest change did not take effect within 30 s");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        manifest_only.push(written.elapsed());
    }
    rows.push(Row {
        what: "reload manifest only (no recompilation; written → limit in effect)".into(),
        samples: manifest_only,
    });
    client.stop().await?;

    // Startup with 20 plugins: the 4 examples and 16 distinct `prefixed` copies.
    let many = scratch.path().join("many");
    std::fs::create_dir_all(&many)?;
    for name in EXAMPLES {
        put(&many.join(format!("{name}.wasm")), &guests[*name])?;
    }
    for i in 0..STARTUP_PLUGINS - EXAMPLES.len() {
        put(
            &many.join(format!("p{i}.wasm")),
            &unique(&guests["prefixed"], &format!("p{i}")),
        )?;
        std::fs::write(
            many.join(format!("p{i}.toml")),
            format!("[environment]\nset = {{ TOOL_PREFIX = \"p{i}\" }}\n"),
        )?;
    }
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..iterations.min(5) {
        let cache = scratch.path().join(format!("startup-cache-{i}"));
        for samples in [&mut cold, &mut warm] {
            let started = Instant::now();
            let client = Client::start(&warden, &many, &cache).await?;
            let tools = client.service.list_all_tools().await?;
            samples.push(started.elapsed());
            if tools.len() < STARTUP_PLUGINS {
                bail!("expected at least {STARTUP_PLUGINS} tools, got {}", tools.len());
            }
            client.stop().await?;
        }
    }
    rows.push(Row {
        what: format!("startup → first tools/list, {STARTUP_PLUGINS} plugins, cold cache"),
        samples: cold,
    });
    rows.push(Row {
        what: format!("startup → first tools/list, {STARTUP_PLUGINS} plugins, warm cache"),
        samples: warm,
    });

    println!("| measurement | n | p50 ms | p90 ms | min ms | max ms |");
    println!("|---|---|---|---|---|---|");
    for row in &rows {
        row.print();
    }
    Ok(())
}
