//! How long compiling components takes on Warden's engine, one after the
//! other in one process (as `warden dev` compiles each new build):
//!
//!     cargo run --release -p warden-runtime --example compile_time -- [--no-incremental] A.wasm B.wasm A.wasm …
//!
//! Prints each compile's wall and CPU time and, with the incremental
//! compilation cache `warden dev` uses (`--no-incremental`: without it, as
//! `warden serve` compiles), the functions it found and compiled. Compiles
//! with Cranelift directly (no compiled-code cache).

// A measurement reads the files it is pointed at freely; the one opener
// (bounded_file) is for what Warden serves.
#![allow(clippy::disallowed_methods)]

use std::sync::Arc;
use std::time::Instant;

use warden_runtime::Runtime;
use warden_runtime::incremental_cache::{DEV_CAP, IncrementalCache};

/// User and system CPU time of the process so far, in seconds.
fn cpu() -> f64 {
    // SAFETY: getrusage only writes the struct passed to it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

fn main() -> anyhow::Result<()> {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let incremental = match paths.iter().position(|a| a == "--no-incremental") {
        Some(at) => {
            paths.remove(at);
            None
        }
        None => Some(Arc::new(IncrementalCache::new(DEV_CAP))),
    };
    let runtime = Runtime::with_incremental_cache(incremental.clone())?;
    for path in paths {
        let bytes = std::fs::read(&path)?;
        let before = incremental.as_ref().map(|cache| cache.stats());
        let (started, cpu_before) = (Instant::now(), cpu());
        runtime.compile(&bytes, false)?;
        let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu() - cpu_before);
        print!("{path}: {wall:.2} s ({cpu:.2} s CPU)");
        if let (Some(cache), Some(before)) = (&incremental, before) {
            let after = cache.stats();
            print!(
                "; functions found {}, compiled {}; cache {:.1} MiB",
                after.hits - before.hits,
                after.misses - before.misses,
                after.bytes as f64 / (1 << 20) as f64
            );
        }
        println!();
    }
    Ok(())
}
