//! How a pooled instance slot's memory is wiped between calls — and why no
//! call can read what an earlier one (of any plugin) left there.
//!
//! The default, `decommit`, returns every page a slot used to the kernel
//! after each call (`madvise(MADV_DONTNEED)`): the next call finds zeroed
//! pages or the module's initial image, whatever the kernel did with the old
//! pages meanwhile — swapped them out, was migrating them to compact memory,
//! merged them with KSM. The least memory at rest; a page fault for every
//! page the next call touches.
//!
//! `rewrite` writes the first 2 MiB of a memory's accessible bytes back to
//! the initial image in place (`memset` and a copy of the image's bytes,
//! through the memory's own mapping, which waits for a page being migrated
//! or swapped in and replaces every byte) and decommits the rest: just as
//! sound; fewer page faults and more concurrent throughput for a small
//! guest, for up to 2 MiB kept resident in every slot used
//! (docs/engine.md has both measured).
//!
//! `dirty-pages` (only on a host without swap) asks Linux which pages the
//! call dirtied (`PAGEMAP_SCAN`) and rewrites only those. Wasmtime 48.0.10
//! asks only for pages *present* in RAM: a dirty page that is swapped out, or
//! that the kernel is migrating at the moment of the scan (compaction, NUMA
//! balancing), is neither reported nor reset, so its contents survive into the
//! next call. A hostile review saw it: 1 marker in 13 502 scans under compaction
//! (docs/engine.md). Wasmtime 48.0.11 also reports non-present written pages;
//! until Warden can build it, this way is an operator's explicit choice, and
//! it says so at start. Swap can be switched on while Warden runs: on this way
//! every call checks, before it starts and after its slot was wiped, that the
//! host still has no swap; the first time it finds some, the way is condemned
//! for the life of the process and every later call is refused with an
//! explanation, until Warden is restarted.

use std::sync::atomic::{AtomicBool, Ordering};

use wasmtime::Enabled;

/// `decommit` (or unset), `rewrite` or `dirty-pages`: see above.
pub const MODE_VARIABLE: &str = "WARDEN_MEMORY_RESET";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    /// Rewrite the first `keep_resident` bytes in place, decommit the rest.
    Rewrite,
    /// Return every page to the kernel after each call: the default.
    Decommit,
    /// Rewrite only the dirtied pages (`PAGEMAP_SCAN`); needs a host without
    /// swap, and the operator's consent (see above).
    DirtyPages,
}

impl ResetMode {
    /// The pooling allocator's `pagemap_scan` setting for this way.
    pub fn pagemap_scan(self) -> Enabled {
        match self {
            ResetMode::DirtyPages => Enabled::Auto,
            ResetMode::Rewrite | ResetMode::Decommit => Enabled::No,
        }
    }

    /// How much of a slot may stay resident (and be rewritten) between
    /// calls: nothing when every page goes back to the kernel.
    pub fn keep_resident(self, resident: usize) -> usize {
        match self {
            ResetMode::Rewrite | ResetMode::DirtyPages => resident,
            ResetMode::Decommit => 0,
        }
    }
}

pub struct MemoryReset {
    mode: ResetMode,
    /// Swap appeared while the fast way was in use.
    condemned: AtomicBool,
}

impl MemoryReset {
    /// Chooses the way for this process from the host's swap and the
    /// operator's override.
    pub fn detect() -> Self {
        let forced = std::env::var(MODE_VARIABLE).ok();
        let mode = choose(forced.as_deref(), swap_bytes());
        match (mode, forced.as_deref()) {
            (ResetMode::DirtyPages, _) => tracing::warn!(
                "{MODE_VARIABLE}=dirty-pages: pooled memory is reset by rewriting the pages a call dirtied; a page \
                 the kernel is migrating or swapping at that moment escapes the reset (Wasmtime 48.0.10), so a \
                 call may read what an earlier call left there (docs/security.md)"
            ),
            (_, Some("dirty-pages")) => tracing::warn!(
                "{MODE_VARIABLE}=dirty-pages is refused on a host with swap (or whose swap cannot be read): a \
                 swapped-out page escapes that reset; pooled memory is decommitted instead"
            ),
            (ResetMode::Rewrite, _) => tracing::info!(
                "pooled memory is rewritten in place after every call, up to 2 MiB a slot ({MODE_VARIABLE})"
            ),
            (ResetMode::Decommit, Some(_)) => {
                tracing::info!("pooled memory is decommitted after every call ({MODE_VARIABLE})")
            }
            (ResetMode::Decommit, None) => tracing::debug!("pooled memory is decommitted after every call"),
        }
        Self {
            mode,
            condemned: AtomicBool::new(false),
        }
    }

    pub fn mode(&self) -> ResetMode {
        self.mode
    }

    /// Whether a call may run now (before it) or whether the slot it used
    /// was wiped soundly (after it). Cheap: one `sysinfo` call, and only
    /// while the fast way is in use.
    pub fn check(&self) -> Result<(), String> {
        if self.mode != ResetMode::DirtyPages {
            return Ok(());
        }
        if !self.condemned.load(Ordering::Relaxed) && swap_bytes().is_some_and(|bytes| bytes > 0) {
            self.condemned.store(true, Ordering::Relaxed);
            tracing::error!(
                "swap was switched on while Warden was running; its fast memory reset cannot wipe swapped-out \
                 pages, so no plugin call will run until Warden is restarted (it then uses the safe reset)"
            );
        }
        if self.condemned.load(Ordering::Relaxed) {
            return Err(
                "swap was switched on while Warden was running, and calls could then read memory \
                        an earlier call left behind; the operator must restart Warden"
                    .into(),
            );
        }
        Ok(())
    }
}

fn choose(forced: Option<&str>, swap: Option<u64>) -> ResetMode {
    match (forced, swap) {
        (None | Some("decommit") | Some(""), _) => ResetMode::Decommit,
        (Some("rewrite"), _) => ResetMode::Rewrite,
        // Only where no page can be swapped out (unknown swap: not Linux, or
        // the call failed, counts as some).
        (Some("dirty-pages"), Some(0)) => ResetMode::DirtyPages,
        (Some("dirty-pages"), _) => ResetMode::Decommit,
        (Some(other), _) => {
            tracing::warn!("{MODE_VARIABLE}={other:?} is not `decommit`, `rewrite` or `dirty-pages`; using `decommit`");
            ResetMode::Decommit
        }
    }
}

/// The host's total swap, in bytes.
fn swap_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysinfo only writes the struct passed to it.
        let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
        if unsafe { libc::sysinfo(&mut info) } != 0 {
            return None;
        }
        Some((info.totalswap as u64).saturating_mul(u64::from(info.mem_unit)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_way_only_when_asked_and_without_swap() {
        assert_eq!(choose(None, Some(0)), ResetMode::Decommit);
        assert_eq!(choose(Some("rewrite"), Some(4 << 30)), ResetMode::Rewrite);
        assert_eq!(choose(Some("decommit"), Some(0)), ResetMode::Decommit);
        assert_eq!(choose(Some("dirty-pages"), Some(0)), ResetMode::DirtyPages);
        assert_eq!(choose(Some("dirty-pages"), Some(4 << 30)), ResetMode::Decommit);
        assert_eq!(choose(Some("dirty-pages"), None), ResetMode::Decommit);
        assert_eq!(choose(Some("auto"), Some(0)), ResetMode::Decommit);
        assert_eq!(choose(Some("fast please"), Some(0)), ResetMode::Decommit);
    }

    #[test]
    fn swap_appearing_condemns_the_fast_way_for_good() {
        let reset = MemoryReset {
            mode: ResetMode::DirtyPages,
            condemned: AtomicBool::new(false),
        };
        if swap_bytes() == Some(0) {
            assert!(reset.check().is_ok());
        }
        reset.condemned.store(true, Ordering::Relaxed);
        let refused = reset.check().unwrap_err();
        assert!(refused.contains("restart Warden"), "{refused}");
        for mode in [ResetMode::Rewrite, ResetMode::Decommit] {
            let safe = MemoryReset {
                mode,
                condemned: AtomicBool::new(false),
            };
            assert!(safe.check().is_ok());
        }
    }
}
