//! Micro-benchmark of one call's sandbox: store + sandbox setup,
//! instantiation, and the guest's work, from the host's own timings.
//!
//!     cargo run --release -p warden-plugins --example call_cost -- PLUGINS_DIR PLUGIN TOOL [ARGS_JSON] [CALLS]
//!
//! e.g. `... -- target/plugins/examples text text_stats '{"text":"hi"}' 5000`. Loads the folder's
//! plugin named PLUGIN with its manifest (so grants are included) and calls TOOL
//! sequentially, then prints medians and p99s in microseconds, the page faults and
//! the instance's memory per call, and the process's RSS.
//!
//! Environment:
//! - `CALL_COST_CACHE=DIR`: load through a compiled-code cache in DIR, twice: the
//!   first load compiles (and writes the entry) when DIR holds none, the second
//!   loads the entry; both are timed, and the calls use the second.
//! - `CALL_COST_CONCURRENT=N`: afterwards, runs rounds of N calls at once and
//!   prints the RSS they needed.
//! - `CALL_COST_PAUSE_MS=N`: pause N ms after each call, as an agent's calls
//!   come (the machine's caches and idle states then meet each call cold).
//! - `CALL_COST_SPIN_US=N`: busy-wait N µs before each call (with or instead
//!   of a pause): whether a core kept busy meets the call any warmer.
//! - `CALL_COST_AHEAD=1`: as `warden serve` does, instantiate each call's
//!   successor ahead of it (a spare), so calls run on sandboxes made earlier.
//! - `CALL_COST_BASELINE=1`: load as `warden serve` loads a large component
//!   (tiering on): Winch's baseline code, which these calls then run on (no
//!   reconciler moves the plugin onto the optimised code compiled meanwhile).

#![allow(clippy::disallowed_macros)]
// a benchmark printing its own figures

// A measurement reads the files it is pointed at freely; the one opener
// (bounded_file) is for what Warden serves.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use warden_plugins::loader;
use warden_runtime::cache::CodeCache;
use warden_runtime::contract::types::InputRequired;
use warden_runtime::{CallContext, Runtime};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e6
}

/// Minor and major page faults of the process so far.
fn faults() -> (i64, i64) {
    // SAFETY: getrusage only writes the struct passed to it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    (usage.ru_minflt, usage.ru_majflt)
}

/// A `/proc/self/status` line's value in KiB (`VmRSS`, `VmHWM`).
fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn load(
    runtime: &Arc<Runtime>,
    dir: &str,
    name: &str,
    cache: Option<&Path>,
) -> anyhow::Result<warden_plugins::plugin::Plugin> {
    let (sources, _) = loader::discover(Path::new(dir))?;
    let source = sources
        .iter()
        .find(|s| s.stem == name)
        .expect("no such plugin in the folder");
    let cache = cache.map(CodeCache::open).transpose()?;
    let started = Instant::now();
    let loader = loader::Loader::new(runtime.clone(), cache, &[PathBuf::from(dir)], Default::default());
    if std::env::var_os("CALL_COST_BASELINE").is_some() {
        loader.enable_tiering();
    }
    let plugin = loader.load(source, &[]).await?;
    eprintln!(
        "load ({:?}): {:.3} s, RSS {} KiB",
        plugin.code,
        started.elapsed().as_secs_f64(),
        status_kib("VmRSS")
    );
    Ok(plugin)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name, tool) = (&args[1], &args[2], &args[3]);
    let arguments: serde_json::Value = serde_json::from_str(args.get(4).map_or("{}", String::as_str))?;
    let arguments_json = arguments.to_string();
    let calls: usize = args.get(5).map_or(Ok(2000), |n| n.parse())?;
    let cache = std::env::var_os("CALL_COST_CACHE").map(PathBuf::from);

    let runtime = Runtime::new()?;
    eprintln!(
        "pooling {}, memory reset {:?}",
        runtime.pooling(),
        runtime.memory_reset()
    );
    let mut plugin = load(&runtime, dir, name, cache.as_deref()).await?;
    if cache.is_some() {
        plugin = load(&runtime, dir, name, cache.as_deref()).await?;
    }
    let plugin = Arc::new(plugin);

    let (mut setup, mut instantiate, mut run, mut total) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut memory = 0;
    let mut first = None;
    let mut measured_faults = (0, 0);
    let pause = std::env::var("CALL_COST_PAUSE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::ZERO, Duration::from_millis);
    let ahead = std::env::var_os("CALL_COST_AHEAD").is_some();
    let mut served_ahead = 0;
    for i in 0..calls + calls / 10 {
        if i == calls / 10 {
            measured_faults = faults();
        }
        if let Some(spin) = std::env::var("CALL_COST_SPIN_US").ok().and_then(|us| us.parse().ok()) {
            let until = Instant::now() + Duration::from_micros(spin);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
        let started = Instant::now();
        let (result, report) = plugin
            .call_tool(
                &runtime,
                tool,
                warden_plugins::plugin::ToolArguments {
                    value: &arguments,
                    json: &arguments_json,
                    plain: None,
                },
                None,
                CallContext {
                    prepare_next: ahead,
                    ..CallContext::detached(plugin.name.clone())
                },
                &std::convert::identity::<InputRequired>,
            )
            .await;
        let elapsed = started.elapsed();
        assert!(matches!(result, Ok(Ok(_))), "the call failed: {result:?}");
        memory = memory.max(report.memory);
        first.get_or_insert((elapsed, report.instantiate, report.run));
        if i >= calls / 10 {
            // The first tenth warms up caches and the pool.
            setup.push(report.setup);
            instantiate.push(report.instantiate);
            run.push(report.run);
            total.push(elapsed);
            served_ahead += usize::from(!report.instantiated_ahead.is_zero());
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
    let after = faults();
    let measured = setup.len() as f64;
    if ahead {
        println!("served ahead {served_ahead} of {}", setup.len());
    }
    if let Some((total, instantiate, run)) = first {
        println!(
            "first call   {:>8.1} µs   (instantiate {:.1} µs, run {:.1} µs)",
            total.as_secs_f64() * 1e6,
            instantiate.as_secs_f64() * 1e6,
            run.as_secs_f64() * 1e6
        );
    }
    for (label, samples) in [
        ("setup", &mut setup),
        ("instantiate", &mut instantiate),
        ("run", &mut run),
        ("total", &mut total),
    ] {
        samples.sort();
        println!(
            "{label:<12} p50 {:>8.1} µs   p99 {:>8.1} µs   (n={})",
            percentile(samples, 0.5),
            percentile(samples, 0.99),
            samples.len()
        );
    }
    println!(
        "page faults  {:.1} minor, {:.2} major per call; instance memory {:.2} MiB; RSS {} KiB (peak {} KiB)",
        (after.0 - measured_faults.0) as f64 / measured,
        (after.1 - measured_faults.1) as f64 / measured,
        memory as f64 / (1 << 20) as f64,
        status_kib("VmRSS"),
        status_kib("VmHWM")
    );

    if let Some(n) = std::env::var("CALL_COST_CONCURRENT")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        let before = status_kib("VmRSS");
        let started = Instant::now();
        let rounds = 20;
        for _ in 0..rounds {
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..n {
                let (plugin, runtime, tool, arguments, arguments_json) = (
                    plugin.clone(),
                    runtime.clone(),
                    tool.clone(),
                    arguments.clone(),
                    arguments_json.clone(),
                );
                tasks.spawn(async move {
                    let call = CallContext::detached(plugin.name.clone());
                    let (result, _) = plugin
                        .call_tool(
                            &runtime,
                            &tool,
                            warden_plugins::plugin::ToolArguments {
                                value: &arguments,
                                json: &arguments_json,
                                plain: None,
                            },
                            None,
                            call,
                            &std::convert::identity::<InputRequired>,
                        )
                        .await;
                    assert!(matches!(result, Ok(Ok(_))), "the call failed: {result:?}");
                });
            }
            while let Some(done) = tasks.join_next().await {
                done?;
            }
        }
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "concurrent   {n} at once, {rounds} rounds: {:.0} calls/s; RSS before {before} KiB, after {} KiB, peak {} KiB",
            (n * rounds) as f64 / elapsed,
            status_kib("VmRSS"),
            status_kib("VmHWM")
        );
    }
    Ok(())
}
