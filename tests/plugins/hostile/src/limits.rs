//! Attempts on the sandbox's limits: time, memory, stack and output.

use crate::{Args, Outcome};
use std::hint::black_box;
use std::io::Write;

const MIB: usize = 1 << 20;

pub fn spin() -> Outcome {
    let mut counter = 0u64;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

pub fn alloc(args: &Args) -> Outcome {
    let megabytes = args.u64("megabytes")?;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for i in 0..megabytes {
        // Writing every byte makes the pages real, whatever the allocator does.
        chunks.push(black_box(vec![i as u8 | 1; MIB]));
    }
    black_box(&chunks);
    Ok(format!("allocated {} MiB", chunks.len()))
}

/// Each frame keeps a buffer live across the recursive call, so it is neither a
/// tail call nor small.
#[inline(never)]
fn dive(depth: u64, target: u64) -> u64 {
    let frame = black_box([depth as u8; 64]);
    if depth >= target {
        return depth;
    }
    let reached = dive(black_box(depth + 1), target);
    black_box(&frame);
    reached
}

pub fn recurse(args: &Args) -> Outcome {
    Ok(dive(0, args.u64("depth")?).to_string())
}

pub fn big_result(args: &Args) -> Outcome {
    let megabytes = args.u64("megabytes")? as usize;
    Ok("x".repeat(megabytes.saturating_mul(MIB)))
}

pub fn flood_stdout(args: &Args) -> Outcome {
    let chunk = "x".repeat(64 << 10);
    for _ in 0..args.u64("megabytes")?.saturating_mul(16) {
        print!("{chunk}");
    }
    let _ = std::io::stdout().flush();
    Ok("flooded".into())
}
