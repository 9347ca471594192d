//! Warden against the native limit, side by side in one run.
//!
//!     cargo xtask bench            # builds everything in release, then runs this
//!
//! or, with the binaries and plugins already built:
//!
//!     warden-bench --warden W --native N --plugin bench.wasm --prefixed prefixed.wasm
//!                  --reload-v1 reload-v1.wasm --reload-v2 reload-v2.wasm [--out FILE] [--quick]
//!                  [--only stdio,http,memory,startup,breakdown,soak,devloop]
//!
//! Both servers offer the same two tools (`echo`, and `hash`: SHA-256 of
//! 64 KiB); every answer is checked. The soak (`soak.rs`) runs Warden alone,
//! under load while its plugin is replaced. Prints Markdown tables and writes JSON.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};

mod devloop;
mod figures;
mod large;
mod memory;
mod process;
mod report;
mod soak;
mod stats;

use figures::{HttpFigures, StdioFigures};
use process::{cpu_time, memory};
use report::Report;
use stats::Summary;

type Client = RunningService<RoleClient, ()>;

struct Options {
    warden: PathBuf,
    native: PathBuf,
    plugin: PathBuf,
    prefixed: PathBuf,
    /// The two builds the soak alternates between.
    reload_v1: Option<PathBuf>,
    reload_v2: Option<PathBuf>,
    /// Large components (a Python or JavaScript runtime with its program),
    /// each beside its manifest, for the startup section.
    large: Vec<PathBuf>,
    out: PathBuf,
    quick: bool,
    /// Run only these sections (all but devloop when empty): stdio, http,
    /// memory, startup, breakdown, soak, devloop.
    only: Vec<String>,
}

impl Options {
    fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }
}

fn options() -> Result<Options> {
    let mut args = std::env::args().skip(1);
    let (mut warden, mut native, mut plugin, mut prefixed) = (None, None, None, None);
    let (mut reload_v1, mut reload_v2) = (None, None);
    let mut out = PathBuf::from("target/bench/results.json");
    let mut quick = false;
    let mut only = Vec::new();
    let mut large = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--warden" => warden = Some(PathBuf::from(value()?)),
            "--native" => native = Some(PathBuf::from(value()?)),
            "--plugin" => plugin = Some(PathBuf::from(value()?)),
            "--prefixed" => prefixed = Some(PathBuf::from(value()?)),
            "--reload-v1" => reload_v1 = Some(PathBuf::from(value()?)),
            "--reload-v2" => reload_v2 = Some(PathBuf::from(value()?)),
            "--large" => large.push(PathBuf::from(value()?)),
            "--out" => out = PathBuf::from(value()?),
            "--quick" => quick = true,
            "--only" => only.extend(value()?.split(',').map(String::from)),
            other => bail!("unknown argument {other:?}; see the top of bench/src/main.rs"),
        }
    }
    Ok(Options {
        warden: warden.context("--warden is required")?,
        native: native.context("--native is required")?,
        plugin: plugin.context("--plugin is required")?,
        prefixed: prefixed.context("--prefixed is required")?,
        reload_v1,
        reload_v2,
        large,
        out,
        quick,
        only,
    })
}

/// The servers under test.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    /// The native server through rmcp's own stdio transport.
    Native,
    /// The native server reading and writing its stdio pipes without
    /// blocking, as Warden's stdio transport does: the sandbox's own cost.
    NativePipes,
    Warden,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Native => "native",
            Side::NativePipes => "native-pipes",
            Side::Warden => "warden",
        }
    }
}

/// A folder holding the benchmark plugin, for Warden.
struct Fixture {
    options: Options,
    plugins: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Fixture {
    fn command(&self, side: Side, extra: &[&str]) -> tokio::process::Command {
        match side {
            Side::Native | Side::NativePipes => {
                let mut command = tokio::process::Command::new(&self.options.native);
                if side == Side::NativePipes {
                    command.arg("--pipes");
                }
                command.args(extra);
                command
            }
            Side::Warden => {
                let mut command = tokio::process::Command::new(&self.options.warden);
                command
                    .arg("serve")
                    .arg("--plugins")
                    .arg(self.plugins.path())
                    .arg("--cache-dir")
                    .arg(self.cache.path())
                    .arg("--no-watch")
                    .args(extra);
                command
            }
        }
    }
}

async fn connect_stdio(command: tokio::process::Command) -> Result<(Client, u32)> {
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start the server")?;
    let pid = transport.id().context("the server has no pid")?;
    let client =
        ().serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .context("cannot connect over stdio")?;
    Ok((client, pid))
}

async fn connect_http(url: &str) -> Result<Client> {
    let transport = StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(url));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    ().serve_with_lifecycle(transport, lifecycle)
        .await
        .context("cannot connect over HTTP")
}

/// A tool, its arguments for the i-th call, and the answer to expect.
#[derive(Clone, Copy)]
enum Tool {
    Echo,
    Hash,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Echo => "echo",
            Tool::Hash => "hash",
        }
    }

    /// The request for the i-th call, and the answer it must get.
    fn call(self, i: u64, hashes: &ExpectedHashes) -> (CallToolRequestParams, String) {
        let (arguments, expected) = match self {
            Tool::Echo => {
                let text = format!("hello {i}");
                (json!({ "text": text }), text)
            }
            Tool::Hash => (json!({ "seed": i % 64 }), hashes.get(i)),
        };
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        (
            CallToolRequestParams::new(self.name()).with_arguments(arguments),
            expected,
        )
    }
}

/// Calls once and checks the answer.
async fn checked_call(client: &Client, tool: Tool, i: u64, hashes: &ExpectedHashes) -> Result<()> {
    let (params, expected) = tool.call(i, hashes);
    let result = client.call_tool(params).await.context("the call failed")?;
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or_default();
    ensure!(
        result.is_error != Some(true) && text == expected,
        "wrong answer from {}: {result:?}",
        tool.name()
    );
    Ok(())
}

/// The 64 expected hashes, computed once so checking is free during a run.
#[derive(Clone)]
struct ExpectedHashes(Arc<Vec<String>>);

impl ExpectedHashes {
    fn new() -> Self {
        Self(Arc::new((0..64).map(warden_bench::hash).collect()))
    }

    fn get(&self, i: u64) -> String {
        self.0[(i % 64) as usize].clone()
    }
}

/// Sequential round trips over stdio, and the server's CPU time over them.
async fn stdio_latency(
    fixture: &Fixture,
    side: Side,
    tool: Tool,
    calls: usize,
    hashes: &ExpectedHashes,
) -> Result<StdioFigures> {
    let (client, pid) = connect_stdio(fixture.command(side, &[])).await?;
    let warmup = (calls / 10).max(20) as u64;
    for i in 0..warmup {
        checked_call(&client, tool, i, hashes).await?;
    }
    let cpu_before = cpu_time(pid)?;
    let mut samples = Vec::with_capacity(calls);
    for i in warmup..warmup + calls as u64 {
        let started = Instant::now();
        checked_call(&client, tool, i, hashes).await?;
        samples.push(started.elapsed());
    }
    let server_cpu = cpu_time(pid)?.saturating_sub(cpu_before);
    client.cancel().await.ok();
    Ok(StdioFigures {
        latency: Summary::of(samples),
        server_cpu_per_call: server_cpu / calls as u32,
    })
}

/// A server listening on HTTP, started by the bench.
struct HttpServer {
    child: tokio::process::Child,
    url: String,
    /// Where its stderr (its log) goes.
    log: tempfile::NamedTempFile,
}

impl HttpServer {
    async fn start(mut command: tokio::process::Command) -> Result<Self> {
        let log = tempfile::NamedTempFile::new()?;
        let mut child = command
            .arg("--http")
            .arg("127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log.reopen()?))
            .kill_on_drop(true)
            .spawn()
            .context("cannot start the server")?;
        let started = Instant::now();
        loop {
            // The server's log, in a temporary file of the benchmark's own.
            #[allow(clippy::disallowed_methods)]
            let text = std::fs::read_to_string(log.path())?;
            if let Some(at) = text.find("serving MCP over HTTP at ") {
                let url = text[at + "serving MCP over HTTP at ".len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                return Ok(Self { child, url, log });
            }
            if let Some(status) = child.try_wait()? {
                bail!("the server exited ({status}):\n{text}");
            }
            ensure!(
                started.elapsed() < Duration::from_secs(60),
                "the server did not start:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or_default()
    }

    /// Its log so far.
    // A temporary file of the benchmark's own.
    #[allow(clippy::disallowed_methods)]
    fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

/// How many turns each server takes at each HTTP load.
const HTTP_ROUNDS: usize = 3;

/// The pause after each answer in the paced run of the trivial calls.
const TRIVIAL_CALL_PAUSE: Duration = Duration::from_millis(10);

/// What one HTTP load measured.
#[derive(Default)]
struct HttpLoad {
    /// Each call's latency.
    samples: Vec<Duration>,
    /// How long the calls took.
    seconds: f64,
    /// The CPU time the server spent meanwhile (user + system).
    server_cpu: Duration,
}

/// `concurrency` clients calling `server` as fast as they can for `duration`.
async fn http_load(
    server: &HttpServer,
    tool: Tool,
    concurrency: usize,
    duration: Duration,
    hashes: &ExpectedHashes,
) -> Result<HttpLoad> {
    let url = &server.url;
    let mut clients = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let client = connect_http(url).await?;
        // One warm-up call each: connections and pools are ready before timing.
        checked_call(&client, tool, 0, hashes).await?;
        clients.push(client);
    }
    let cpu_before = cpu_time(server.pid())?;
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = tokio::task::JoinSet::new();
    for (worker, client) in clients.into_iter().enumerate() {
        let hashes = hashes.clone();
        workers.spawn(async move {
            let mut samples = Vec::new();
            let mut i = worker as u64 * 1_000_000;
            while Instant::now() < deadline {
                let call = Instant::now();
                checked_call(&client, tool, i, &hashes).await?;
                samples.push(call.elapsed());
                i += 1;
            }
            client.cancel().await.ok();
            Ok::<_, anyhow::Error>(samples)
        });
    }
    let mut samples = Vec::new();
    while let Some(joined) = workers.join_next().await {
        samples.extend(joined??);
    }
    let seconds = started.elapsed().as_secs_f64();
    let server_cpu = cpu_time(server.pid())?.saturating_sub(cpu_before);
    Ok(HttpLoad {
        samples,
        seconds,
        server_cpu,
    })
}

/// A folder of `count` copies of the `prefixed` plugin, each with its own
/// tool name (set by its manifest).
fn prefixed_folder(prefixed: &Path, count: usize) -> Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    for i in 0..count {
        std::fs::copy(prefixed, dir.path().join(format!("p{i}.wasm")))?;
        std::fs::write(
            dir.path().join(format!("p{i}.toml")),
            format!("[environment]\nset = {{ TOOL_PREFIX = \"p{i}\" }}\n"),
        )?;
    }
    Ok(dir)
}

/// Spawn to the first `tools/list` answer.
async fn startup(command: tokio::process::Command, tools: usize) -> Result<Duration> {
    let started = Instant::now();
    let (client, _) = connect_stdio(command).await?;
    let listed = client.list_all_tools().await?;
    let elapsed = started.elapsed();
    ensure!(listed.len() == tools, "expected {tools} tools, got {}", listed.len());
    client.cancel().await.ok();
    Ok(elapsed)
}

fn warden_over(options: &Options, plugins: &Path, cache: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(&options.warden);
    command
        .arg("serve")
        .arg("--plugins")
        .arg(plugins)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--no-watch");
    command
}

/// The large components (`--large`), prepared once for the sections that
/// use them.
async fn large_components<'a>(
    options: &Options,
    prepared: &'a mut Option<Vec<large::Large>>,
) -> Result<&'a [large::Large]> {
    if prepared.is_none() {
        let mut all = Vec::new();
        for component in &options.large {
            eprintln!("preparing {}", component.display());
            all.push(large::prepare(options, component).await?);
        }
        *prepared = Some(all);
    }
    Ok(prepared.as_deref().unwrap_or_default())
}

/// The audit log's records after the first `warmup`: `calls` of them.
// The audit log of a server the benchmark started, in its own temporary folder.
#[allow(clippy::disallowed_methods)]
fn audit_records(path: &Path, warmup: usize, calls: usize) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    let records: Vec<Value> = text
        .lines()
        .skip(warmup)
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    ensure!(
        records.len() == calls,
        "expected {calls} audit records, got {}",
        records.len()
    );
    Ok(records)
}

/// Per-call timings from Warden's audit log.
async fn breakdown(fixture: &Fixture, tool: Tool, calls: usize, hashes: &ExpectedHashes) -> Result<Value> {
    let audit = tempfile::NamedTempFile::new()?;
    let audit_path = audit.path().to_string_lossy().into_owned();
    let (client, _) = connect_stdio(fixture.command(Side::Warden, &["--audit-log", &audit_path])).await?;
    let warmup = (calls / 10).max(20);
    let mut round_trips = Vec::new();
    for i in 0..(warmup + calls) as u64 {
        let started = Instant::now();
        checked_call(&client, tool, i, hashes).await?;
        if i >= warmup as u64 {
            round_trips.push(started.elapsed());
        }
    }
    client.cancel().await.ok();
    let records = audit_records(audit.path(), warmup, calls)?;
    let part = |key: &str| -> Result<Summary> {
        let samples = records
            .iter()
            .map(|r| {
                r["timing"][key]
                    .as_u64()
                    .map(Duration::from_micros)
                    .with_context(|| format!("no timing.{key} in {r}"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Summary::of(samples))
    };
    let mut parts = serde_json::Map::new();
    for key in ["validate_us", "setup_us", "instantiate_us", "guest_us", "convert_us"] {
        parts.insert(key.trim_end_matches("_us").to_string(), part(key)?.to_json());
    }
    // Calls that found a sandbox instantiated ahead of them (`spare.rs`):
    // how long that took, off their path.
    let ahead: Vec<Duration> = records
        .iter()
        .filter_map(|r| r["timing"]["instantiated_ahead_us"].as_u64().map(Duration::from_micros))
        .collect();
    parts.insert("instantiated_ahead".into(), Summary::of_any(ahead).to_json());
    parts.insert("round_trip".into(), Summary::of(round_trips).to_json());
    Ok(Value::Object(parts))
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = options()?;
    let began = Instant::now();
    let quick = options.quick;
    let hashes = ExpectedHashes::new();
    let plugins = tempfile::tempdir()?;
    std::fs::copy(&options.plugin, plugins.path().join("bench.wasm"))
        .with_context(|| format!("cannot copy {}", options.plugin.display()))?;
    let fixture = Fixture {
        options,
        plugins,
        cache: tempfile::tempdir()?,
    };
    let mut report = Report::new(quick);
    let mut prepared = None;

    let runs = |section: &str| fixture.options.runs(section);

    // 1. stdio latency, sequential.
    if runs("stdio") {
        for (tool, calls) in [
            (Tool::Echo, if quick { 200 } else { 2000 }),
            (Tool::Hash, if quick { 50 } else { 500 }),
        ] {
            for side in [Side::Native, Side::NativePipes, Side::Warden] {
                eprintln!("stdio {} {} × {calls}", side.name(), tool.name());
                let figures = stdio_latency(&fixture, side, tool, calls, &hashes).await?;
                report.stdio(tool.name(), side.name(), figures);
            }
        }
    }

    // 2. HTTP throughput and latency at several concurrencies; memory under load.
    // Both servers run at once and take turns, in rounds whose order
    // alternates: a shared machine's speed drifts over a run, and one side
    // measured wholly before the other would carry the drift in its ratio.
    if runs("http") {
        let duration = Duration::from_secs(if quick { 1 } else { 3 });
        let sides = [Side::Native, Side::Warden];
        let mut servers = Vec::new();
        for side in sides {
            servers.push(HttpServer::start(fixture.command(side, &[])).await?);
        }
        for tool in [Tool::Echo, Tool::Hash] {
            for concurrency in [1, 8, 32] {
                let mut measured = [HttpLoad::default(), HttpLoad::default()];
                for round in 0..HTTP_ROUNDS {
                    let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
                    for index in order {
                        let side = sides[index];
                        eprintln!(
                            "http {} {} c={concurrency} round {}",
                            side.name(),
                            tool.name(),
                            round + 1
                        );
                        let load = http_load(
                            &servers[index],
                            tool,
                            concurrency,
                            duration / HTTP_ROUNDS as u32,
                            &hashes,
                        )
                        .await?;
                        let total = &mut measured[index];
                        total.samples.extend(load.samples);
                        total.seconds += load.seconds;
                        total.server_cpu += load.server_cpu;
                    }
                }
                for (index, load) in measured.into_iter().enumerate() {
                    let calls = load.samples.len();
                    report.http(
                        tool.name(),
                        concurrency,
                        sides[index].name(),
                        HttpFigures {
                            throughput: calls as f64 / load.seconds,
                            server_cpu_per_call: load.server_cpu / calls.max(1) as u32,
                            latency: Summary::of(load.samples),
                        },
                    );
                }
            }
        }
        for (side, server) in sides.into_iter().zip(&servers) {
            let (peak, _) = memory(server.pid())?;
            report.memory(
                "peak RSS, after the HTTP runs (concurrency up to 32)",
                side.name(),
                peak,
            );
        }
    }

    // 3. Memory idle: 20 plugins after a cold start, then 1 to 1 000 after
    // warm ones (the growth per plugin), against the native server.
    if runs("memory") {
        memory::run(&fixture, &mut report).await?;
    }

    // 4. Startup to the first tools/list, cold and warm compile cache.
    if runs("startup") {
        let repeats = if quick { 1 } else { 3 };
        for count in [1, 20, 100] {
            let folder = prefixed_folder(&fixture.options.prefixed, count)?;
            let mut cold = Vec::new();
            let mut warm = Vec::new();
            let warm_cache = tempfile::tempdir()?;
            startup(warden_over(&fixture.options, folder.path(), warm_cache.path()), count).await?;
            for _ in 0..repeats {
                eprintln!("startup {count} plugins");
                let cold_cache = tempfile::tempdir()?;
                cold.push(startup(warden_over(&fixture.options, folder.path(), cold_cache.path()), count).await?);
                warm.push(startup(warden_over(&fixture.options, folder.path(), warm_cache.path()), count).await?);
            }
            report.startup(count, Summary::of(cold), Summary::of(warm));
        }
        let mut native_start = Vec::new();
        for _ in 0..repeats {
            native_start.push(startup(fixture.command(Side::Native, &[]), 2).await?);
        }
        report.native_startup(Summary::of(native_start));
        for large in large_components(&fixture.options, &mut prepared).await? {
            let (cold, warm) = large.startup(&fixture.options, repeats).await?;
            report.large_startup(&large.label, cold, warm);
        }
    }

    // 5. Where a call's time goes inside Warden.
    if runs("breakdown") {
        for (tool, calls) in [
            (Tool::Echo, if quick { 200 } else { 1000 }),
            (Tool::Hash, if quick { 50 } else { 200 }),
        ] {
            eprintln!("breakdown {}", tool.name());
            report.breakdown(tool.name(), breakdown(&fixture, tool, calls, &hashes).await?);
        }
        // A trivial call in a fresh instance of a Python and a JavaScript
        // component, on their optimised code: back to back, and with a pause
        // after each answer, as an agent's calls come (a model's turn between
        // two is far longer than 10 ms).
        for large in large_components(&fixture.options, &mut prepared).await? {
            eprintln!("breakdown {}", large.label);
            for (calls, pause) in [
                (if quick { 50 } else { 300 }, Duration::ZERO),
                (if quick { 20 } else { 100 }, TRIVIAL_CALL_PAUSE),
            ] {
                if let Some(call) = large.trivial_call(&fixture.options, calls, pause).await? {
                    report.trivial_call(call);
                }
            }
        }
    }

    // 6. The soak: Warden under load at high concurrency while its plugin is
    // replaced again and again.
    if runs("soak") {
        let (Some(v1), Some(v2)) = (&fixture.options.reload_v1, &fixture.options.reload_v2) else {
            bail!("the soak needs --reload-v1 and --reload-v2");
        };
        let plan = if quick {
            soak::Plan {
                calls: 1000,
                concurrency: 16,
                reloads: 6,
            }
        } else {
            soak::Plan {
                calls: 10_000,
                concurrency: 64,
                reloads: 50,
            }
        };
        eprintln!(
            "soak: {} calls at concurrency {}, {} reloads",
            plan.calls, plan.concurrency, plan.reloads
        );
        report.soak(soak::run(&fixture.options.warden, v1, v2, plan).await?);
    }

    // 7. The plugin author's loop, per language: only when asked for (it
    // builds real projects with each language's toolchain).
    if fixture.options.only.iter().any(|s| s == "devloop") {
        let edits = if quick { 3 } else { 7 };
        report.devloop(devloop::run(&fixture.options.warden, edits).await?);
    }

    report.finish(began.elapsed());
    print!("{}", report.markdown());
    if let Some(parent) = fixture.options.out.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&fixture.options.out, serde_json::to_string_pretty(&report.json())?)?;
    eprintln!("JSON: {}", fixture.options.out.display());
    Ok(())
}
