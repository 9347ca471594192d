//! How a pooled instance slot's memory is wiped between calls — and why no
//! call can read what an earlier one (of any plugin) left there.
//!
//! The fast way finds the pages a call dirtied with Linux's `PAGEMAP_SCAN`
//! and rewrites only those: all of them up to the slot's resident budget
//! (Warden's Wasmtime is patched for that: vendor/README.md). `PAGEMAP_SCAN`
//! reports pages that are present in RAM; a dirty page that was swapped out
//! is neither reported nor reset (an open upstream wasmtime issue), so its
//! contents would survive into the next call. The fast way is therefore used only on a host without swap.
//! With swap, every slot is returned to the kernel after each call
//! (`madvise(MADV_DONTNEED)`, which also discards swapped-out pages), so the
//! next call starts from zeroed pages: slower, never leaky.
//!
//! Swap can be switched on while Warden runs. Every call checks, before it
//! starts and after its slot was wiped, that the host still has no swap; the
//! first time it finds some, the fast way is condemned for the life of the
//! process and every later call is refused with an explanation, until
//! Warden is restarted (and then picks the safe way).

use std::sync::atomic::{AtomicBool, Ordering};

use wasmtime::Enabled;

/// Forces the safe way whatever the host's swap (`decommit`), for operators
/// who want it and for the test of that way.
pub const MODE_VARIABLE: &str = "WARDEN_MEMORY_RESET";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    /// Rewrite only the dirtied pages (`PAGEMAP_SCAN`); needs a host without swap.
    DirtyPages,
    /// Return every page to the kernel after each call.
    Decommit,
}

impl ResetMode {
    /// The pooling allocator's `pagemap_scan` setting for this way.
    pub fn pagemap_scan(self) -> Enabled {
        match self {
            ResetMode::DirtyPages => Enabled::Auto,
            ResetMode::Decommit => Enabled::No,
        }
    }

    /// How much of a slot may stay resident (and be rewritten) between
    /// calls: nothing on the safe way, whose pages all go back to the kernel.
    pub fn keep_resident(self, fast: usize) -> usize {
        match self {
            ResetMode::DirtyPages => fast,
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
        match (mode, forced.is_some()) {
            (ResetMode::Decommit, true) => {
                tracing::info!("pooled memory is decommitted after every call ({MODE_VARIABLE})")
            }
            (ResetMode::Decommit, false) => tracing::info!(
                "this host has swap: pooled memory is decommitted after every call (a dirty page that was \
                 swapped out would escape the fast reset)"
            ),
            (ResetMode::DirtyPages, _) => {
                tracing::debug!("no swap: pooled memory is reset by rewriting the pages a call dirtied")
            }
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
        if self.mode == ResetMode::Decommit {
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
        (Some("decommit"), _) => ResetMode::Decommit,
        (Some(other), _) if other != "auto" => {
            tracing::warn!("{MODE_VARIABLE}={other:?} is not `auto` or `decommit`; using the safe `decommit`");
            ResetMode::Decommit
        }
        // Unknown swap (not Linux, or the call failed): the safe way.
        (_, None) => ResetMode::Decommit,
        (_, Some(0)) => ResetMode::DirtyPages,
        (_, Some(_)) => ResetMode::Decommit,
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
    fn the_fast_way_only_without_swap() {
        assert_eq!(choose(None, Some(0)), ResetMode::DirtyPages);
        assert_eq!(choose(Some("auto"), Some(0)), ResetMode::DirtyPages);
        assert_eq!(choose(None, Some(4 << 30)), ResetMode::Decommit);
        assert_eq!(choose(None, None), ResetMode::Decommit);
        assert_eq!(choose(Some("decommit"), Some(0)), ResetMode::Decommit);
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
        let safe = MemoryReset {
            mode: ResetMode::Decommit,
            condemned: AtomicBool::new(false),
        };
        assert!(safe.check().is_ok());
    }
}
