//! The soak: many HTTP `tools/call`s at high concurrency while the plugin's
//! file is replaced again and again, checking that no call fails, that every
//! reload is applied, and that Warden's memory and open files stay flat.
//!
//! The plugin alternates between two builds, `reload-v1` and `reload-v2`
//! (`tests/plugins`): their `version` tool answers "v1" or "v2", and v2 adds
//! a tool, so each reload really swaps code and a client can see when it has
//! landed. A reload is a new file written beside the plugin under a hidden
//! name and renamed into place, as an operator's deploy does.
//!
//! Calls are spread over the reloads: call `i` belongs to phase
//! `i × (reloads + 1) / calls`; the `k`-th reload starts when phase `k`'s
//! first call does, and phase `k + 1` waits until reload `k` is applied. So
//! every reload happens while calls are in flight, and the run cannot outpace
//! the reloads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::sync::{Mutex, watch};

use crate::stats::Summary;
use crate::{Client, HttpServer, connect_http, memory};

/// How long one reload may take to show, before the soak gives up.
const RELOAD_DEADLINE: Duration = Duration::from_secs(60);
/// How often the driver looks at Warden's log and tool list while waiting.
const POLL: Duration = Duration::from_millis(5);
/// What Warden logs when it has replaced a loaded plugin.
const RELOADED: &str = "reloaded plugin `soak`";
/// Warm-up calls per client, all clients at once, before and after the
/// warm-up reloads: the instance pool and the server's buffers then hold
/// what the run will need, and growth after that is what the soak looks for.
const WARMUP_ROUNDS: usize = 20;

/// How big a soak is.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub calls: usize,
    pub concurrency: usize,
    pub reloads: usize,
}

/// Warden's resident memory and open file descriptors at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Resources {
    pub rss: u64,
    pub fds: usize,
}

impl Resources {
    fn of(pid: u32) -> Result<Self> {
        let (_, rss) = memory(pid)?;
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .with_context(|| format!("cannot list /proc/{pid}/fd"))?
            .count();
        Ok(Self { rss, fds })
    }

    pub fn to_json(self) -> Value {
        json!({ "rss_bytes": self.rss, "open_fds": self.fds })
    }
}

/// What a soak measured.
#[derive(Debug)]
pub struct Outcome {
    pub plan: Plan,
    /// Calls that failed or answered wrongly (the soak fails unless zero).
    pub failed: usize,
    /// Answers from each version, v1 and v2.
    pub answers: [usize; 2],
    /// Reloads Warden logged, warm-up excluded.
    pub reloads_applied: usize,
    /// Warm-up reloads (v1 → v2 → v1), before the measured ones.
    pub warmup_reloads: usize,
    /// After start, before any client; after the warm-up; at the end.
    pub start: Resources,
    pub warm: Resources,
    pub end: Resources,
    pub latency: Summary,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn calls_per_second(&self) -> f64 {
        self.plan.calls as f64 / self.elapsed.as_secs_f64()
    }

    pub fn to_json(&self) -> Value {
        json!({
            "calls": self.plan.calls,
            "concurrency": self.plan.concurrency,
            "reloads_requested": self.plan.reloads,
            "reloads_applied": self.reloads_applied,
            "warmup_reloads": self.warmup_reloads,
            "failed": self.failed,
            "answers": { "v1": self.answers[0], "v2": self.answers[1] },
            "elapsed_s": self.elapsed.as_secs_f64(),
            "calls_per_second": (self.calls_per_second() * 10.0).round() / 10.0,
            "latency": self.latency.to_json(),
            "start": self.start.to_json(),
            "after_warmup": self.warm.to_json(),
            "end": self.end.to_json(),
        })
    }
}

/// The two builds the plugin alternates between.
struct Versions {
    folder: PathBuf,
    builds: [Vec<u8>; 2],
}

impl Versions {
    /// Installs `version` (0 is v1, 1 is v2) the way a deploy does: written
    /// beside the plugin under a hidden name, then renamed into place.
    fn install(&self, version: usize) -> Result<()> {
        let hidden = self.folder.join(".soak.wasm.new");
        std::fs::write(&hidden, &self.builds[version]).with_context(|| format!("writing {}", hidden.display()))?;
        std::fs::rename(&hidden, self.folder.join("soak.wasm")).context("renaming the new build into place")
    }
}

/// Runs a soak on `warden` with the plugin builds `v1` and `v2`.
pub async fn run(warden: &Path, v1: &Path, v2: &Path, plan: Plan) -> Result<Outcome> {
    let plugins = tempfile::tempdir()?;
    let cache = tempfile::tempdir()?;
    // The plugin builds the benchmark was given (cargo's output).
    #[allow(clippy::disallowed_methods)]
    let versions = Versions {
        folder: plugins.path().to_path_buf(),
        builds: [
            std::fs::read(v1).with_context(|| format!("reading {}", v1.display()))?,
            std::fs::read(v2).with_context(|| format!("reading {}", v2.display()))?,
        ],
    };
    ensure!(
        versions.builds[0] != versions.builds[1],
        "the two builds are the same file"
    );
    versions.install(0)?;

    let mut command = tokio::process::Command::new(warden);
    command
        .arg("serve")
        .arg("--plugins")
        .arg(plugins.path())
        .arg("--cache-dir")
        .arg(cache.path());
    let server = HttpServer::start(command).await?;
    let pid = server.pid();
    let start = Resources::of(pid)?;

    // Warm-up: every client connected and calling at once, and one round
    // trip of reloads, so both builds have been compiled and cached.
    let mut clients = Vec::with_capacity(plan.concurrency);
    for _ in 0..plan.concurrency {
        let client = connect_http(&server.url).await?;
        expect_version(&client, 0).await.context("warm-up call")?;
        clients.push(client);
    }
    warm_up(&clients, 0).await?;
    let observer = connect_http(&server.url).await?;
    let mut logged = 0;
    for version in [1, 0] {
        versions.install(version)?;
        logged = wait_for_reload(&server, &observer, logged + 1, version).await?;
        warm_up(&clients, version).await?;
    }
    let warmup_reloads = logged;
    let warm = Resources::of(pid)?;

    let began = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let (applied_tx, applied_rx) = watch::channel(0usize);
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut workers = tokio::task::JoinSet::new();
    for client in clients {
        let (next, mut applied, errors) = (next.clone(), applied_rx.clone(), errors.clone());
        workers.spawn(async move {
            let mut samples = Vec::new();
            let mut answers = [0usize; 2];
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= plan.calls {
                    break;
                }
                let phase = i * (plan.reloads + 1) / plan.calls;
                // The reloader is at most one phase behind the calls.
                if applied.wait_for(|a| *a + 1 >= phase).await.is_err() {
                    errors.lock().await.push(format!("call {i}: the reloader stopped"));
                    continue;
                }
                let started = Instant::now();
                match call_version(&client).await {
                    Ok(version) => {
                        samples.push(started.elapsed());
                        answers[version] += 1;
                    }
                    Err(error) => errors.lock().await.push(format!("call {i}: {error:#}")),
                }
            }
            client.cancel().await.ok();
            (samples, answers)
        });
    }

    // The reloader: reload k when phase k begins, and wait until it shows.
    let mut installed = 0;
    for k in 1..=plan.reloads {
        let phase_start = (k * plan.calls).div_ceil(plan.reloads + 1);
        while next.load(Ordering::SeqCst) < phase_start {
            tokio::time::sleep(POLL).await;
        }
        installed = k % 2;
        versions.install(installed)?;
        logged = wait_for_reload(&server, &observer, logged + 1, installed).await?;
        applied_tx.send_replace(k);
    }

    let mut samples = Vec::with_capacity(plan.calls);
    let mut answers = [0usize; 2];
    while let Some(joined) = workers.join_next().await {
        let (worker_samples, worker_answers) = joined.context("a caller panicked")?;
        samples.extend(worker_samples);
        answers[0] += worker_answers[0];
        answers[1] += worker_answers[1];
    }
    let elapsed = began.elapsed();
    // The last reload's build answers once the run is over.
    if let Err(error) = expect_version(&observer, installed).await {
        errors.lock().await.push(format!("the call after the run: {error:#}"));
    }
    let reloads_applied = server.log().matches(RELOADED).count() - warmup_reloads;
    let end = Resources::of(pid)?;
    observer.cancel().await.ok();

    let errors = errors.lock().await;
    if let Some(first) = errors.first() {
        bail!(
            "{} of {} soak calls failed; the first: {first}",
            errors.len(),
            plan.calls
        );
    }
    ensure!(
        samples.len() == plan.calls,
        "{} calls answered, {} planned",
        samples.len(),
        plan.calls
    );
    ensure!(
        reloads_applied >= plan.reloads,
        "Warden logged {reloads_applied} reloads, {} were made",
        plan.reloads
    );
    Ok(Outcome {
        plan,
        failed: errors.len(),
        answers,
        reloads_applied,
        warmup_reloads,
        start,
        warm,
        end,
        latency: Summary::of(samples),
        elapsed,
    })
}

/// `WARMUP_ROUNDS` calls from every client at once, each expecting `version`.
async fn warm_up(clients: &[Client], version: usize) -> Result<()> {
    let mut callers = tokio::task::JoinSet::new();
    for client in clients {
        let peer = Peer::clone(client);
        callers.spawn(async move {
            for _ in 0..WARMUP_ROUNDS {
                expect_version(&peer, version).await.context("warm-up call")?;
            }
            Ok::<_, anyhow::Error>(())
        });
    }
    while let Some(joined) = callers.join_next().await {
        joined.context("a warm-up caller panicked")??;
    }
    Ok(())
}

/// Which version answered `version`: 0 for "v1", 1 for "v2".
async fn call_version(client: &Peer<RoleClient>) -> Result<usize> {
    let result = client
        .call_tool(CallToolRequestParams::new("version"))
        .await
        .context("the call failed")?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str());
    match (result.is_error, text) {
        (Some(true), _) => bail!("the tool failed: {result:?}"),
        (_, Some("v1")) => Ok(0),
        (_, Some("v2")) => Ok(1),
        _ => bail!("a wrong answer: {result:?}"),
    }
}

async fn expect_version(client: &Peer<RoleClient>, version: usize) -> Result<()> {
    let answered = call_version(client).await?;
    ensure!(
        answered == version,
        "v{} answered, v{} expected",
        answered + 1,
        version + 1
    );
    Ok(())
}

/// Waits until Warden has logged `count` reloads in all and a client sees
/// `version`'s tools (v2 has `added_in_v2`); returns the count logged.
async fn wait_for_reload(server: &HttpServer, observer: &Client, count: usize, version: usize) -> Result<usize> {
    let started = Instant::now();
    loop {
        let logged = server.log().matches(RELOADED).count();
        if logged >= count {
            let tools = observer.list_all_tools().await.context("listing tools")?;
            let has_v2_tool = tools.iter().any(|t| t.name == "added_in_v2");
            if has_v2_tool == (version == 1) {
                return Ok(logged);
            }
        }
        if started.elapsed() > RELOAD_DEADLINE {
            bail!(
                "reload {count} (to v{}) did not show within {RELOAD_DEADLINE:?}; Warden's log:\n{}",
                version + 1,
                server.log()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}
