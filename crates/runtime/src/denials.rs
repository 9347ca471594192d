//! The accesses the sandbox refused during one call, for the server log, the
//! audit record and the guest's error message.
//!
//! A plugin can be refused in a loop (a million connects in one call): only
//! the first few refusals are kept and logged, the rest are counted, so a
//! refused plugin cannot flood the log or grow the host's memory.
//!
//! What was refused names what the plugin chose (a host, an address), so a
//! plugin's secrets are redacted from it before it is logged or kept.

use std::sync::{Arc, Mutex};

use crate::metrics::{DenialCounts, DenialKind};
use crate::secrets::Redactor;

/// Refusals kept (and logged) per call.
const KEPT: usize = 16;

#[derive(Clone, Default)]
pub struct Denials {
    log: Arc<Mutex<Log>>,
    redactor: Arc<Redactor>,
}

#[derive(Default)]
struct Log {
    kept: Vec<String>,
    more: u64,
    /// Every refusal, kept or not, by kind.
    counts: DenialCounts,
}

impl Denials {
    /// The refusals of one call of a plugin with these secrets.
    pub fn new(redactor: Arc<Redactor>) -> Self {
        Self {
            log: Arc::default(),
            redactor,
        }
    }

    pub fn record(&self, plugin: &str, kind: DenialKind, message: String) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.counts.add(kind, 1);
        if log.kept.len() < KEPT {
            let message = self.redactor.redact_owned(message);
            tracing::warn!(target: "plugin", plugin, "denied: {message}");
            log.kept.push(message);
        } else {
            log.more += 1;
        }
    }

    /// The refusals so far (with a last line counting those not kept) and
    /// how many of each kind there were, and a fresh start.
    pub fn take(&self, plugin: &str) -> (Vec<String>, DenialCounts) {
        let mut log = std::mem::take(&mut *self.log.lock().unwrap_or_else(|p| p.into_inner()));
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

    #[test]
    fn a_secret_in_what_was_refused_is_redacted() {
        let secret = crate::secrets::Secret::new("sk-live-4f9a1c");
        let denials = Denials::new(Arc::new(Redactor::new([&secret]).unwrap()));
        denials.record(
            "p",
            DenialKind::Http,
            "HTTP request to sk-live-4f9a1c.evil.example is not granted".into(),
        );
        let (taken, _) = denials.take("p");
        assert_eq!(taken, ["HTTP request to [redacted].evil.example is not granted"]);
    }
}
