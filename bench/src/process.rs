//! What the bench reads of a server process from `/proc`.

use std::time::Duration;

use anyhow::{Context, Result};

/// The CPU time a process has spent so far, user and system, all its
/// threads (ended ones included), from `/proc/PID/stat`: in clock ticks,
/// which Linux reports at 100 per second whatever the kernel's own rate.
// The kernel's /proc, not a path anyone configures.
#[allow(clippy::disallowed_methods)]
pub fn cpu_time(pid: u32) -> Result<Duration> {
    const TICKS_PER_SECOND: u64 = 100;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The fields after the command name, which is in parentheses and may
    // hold anything: utime and stime are the 12th and 13th of them.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .context("malformed /proc/PID/stat")?
        .1
        .split_whitespace()
        .collect();
    let tick = |i: usize| -> Result<u64> { Ok(fields.get(i).context("short /proc/PID/stat")?.parse()?) };
    Ok(Duration::from_millis((tick(11)? + tick(12)?) * 1000 / TICKS_PER_SECOND))
}

/// Peak and current resident memory of a process, in bytes.
// The kernel's /proc, not a path anyone configures.
#[allow(clippy::disallowed_methods)]
pub fn memory(pid: u32) -> Result<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> Result<u64> {
        let line = status
            .lines()
            .find(|l| l.starts_with(name))
            .with_context(|| format!("no {name} in /proc/{pid}/status"))?;
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .context("malformed status line")?
            .parse()?;
        Ok(kib * 1024)
    };
    Ok((field("VmHWM:")?, field("VmRSS:")?))
}
