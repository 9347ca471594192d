//! Micro-benchmark of one call's sandbox: store + sandbox setup,
//! instantiation, and the guest's work, from the host's own timings.
//!
//!     cargo run --release -p warden --example call_cost -- PLUGINS_DIR PLUGIN TOOL [ARGS_JSON] [CALLS]
//!
//! e.g. `... -- target/plugins/examples text text_stats '{"text":"hi"}' 5000`. Loads the folder's
//! plugin named PLUGIN with its manifest (so grants are included) and calls TOOL
//! sequentially, then prints medians and p99s in microseconds.

use std::time::{Duration, Instant};

use warden::loader;
use warden::runtime::{CallContext, Runtime};

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e6
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (dir, name, tool) = (&args[1], &args[2], &args[3]);
    let arguments: serde_json::Value = serde_json::from_str(args.get(4).map_or("{}", String::as_str))?;
    let calls: usize = args.get(5).map_or(Ok(2000), |n| n.parse())?;

    let runtime = Runtime::new()?;
    let (sources, _) = loader::discover(std::path::Path::new(dir))?;
    let source = sources
        .iter()
        .find(|s| &s.stem == name)
        .expect("no such plugin in the folder");
    let plugin = loader::Loader::new(runtime.clone(), None, &[dir.into()])
        .load(source, &[])
        .await?;

    let (mut setup, mut instantiate, mut run, mut total) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..calls + calls / 10 {
        let started = Instant::now();
        let (result, report) = plugin
            .call_tool(
                &runtime,
                tool,
                &arguments,
                None,
                CallContext::detached(plugin.name.clone()),
            )
            .await;
        let elapsed = started.elapsed();
        assert!(matches!(result, Ok(Ok(_))), "the call failed: {result:?}");
        if i >= calls / 10 {
            // The first tenth warms up caches and the pool.
            setup.push(report.setup);
            instantiate.push(report.instantiate);
            run.push(report.run);
            total.push(elapsed);
        }
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
    Ok(())
}
