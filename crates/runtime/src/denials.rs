//! The accesses the sandbox refused during one call, for the server log, the
//! audit record and the guest's error message.
//!
//! A plugin can be refused in a loop (a million connects in one call): only
//! the first few refusals are kept and logged, the rest are counted, so a
//! refused plugin cannot flood the log or grow the host's memory.

use std::sync::{Arc, Mutex};

use crate::metrics::{DenialCounts, DenialKind};

/// Refusals kept (and logged) per call.
const KEPT: usize = 16;

#[derive(Clone, Default)]
pub struct Denials(Arc<Mutex<Log>>);

#[derive(Default)]
struct Log {
    kept: Vec<String>,
    more: u64,
    /// Every refusal, kept or not, by kind.
    counts: DenialCounts,
}

impl Denials {
    pub fn record(&self, plugin: &str, kind: DenialKind, message: String) {
        let mut log = self.0.lock().unwrap_or_else(|p| p.into_inner());
        log.counts.add(kind, 1);
        if log.kept.len() < KEPT {
            tracing::warn!(target: "plugin", plugin, "denied: {message}");
            log.kept.push(message);
        } else {
            log.more += 1;
        }
    }

    /// The refusals so far (with a last line counting those not kept) and
    /// how many of each kind there were, and a fresh start.
    pub fn take(&self, plugin: &str) -> (Vec<String>, DenialCounts) {
        let mut log = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        if log.more > 0 {
            let line = format!("… and {} more refused accesses in this call", log.more);
            tracing::warn!(target: "plugin", plugin, "denied: {line}");
            log.kept.push(line);
        }
        (log.kept, log.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_refusals_keeps_a_few_and_counts_the_rest() {
        let denials = Denials::default();
        for i in 0..100_000 {
            denials.record("p", DenialKind::Socket, format!("connect #{i}"));
        }
        let (taken, counts) = denials.take("p");
        assert_eq!(counts.get(DenialKind::Socket), 100_000);
        assert_eq!(taken.len(), KEPT + 1);
        assert_eq!(taken[0], "connect #0");
        assert_eq!(taken[KEPT], "… and 99984 more refused accesses in this call");
        assert!(denials.take("p").0.is_empty());
    }
}
