//! What one load or reconciliation did: counted for the startup log line,
//! the metrics and the benchmarks.

use warden_runtime::cache::CodeOrigin;
use warden_runtime::metrics;

/// What one load or reconciliation did, for logs and benchmarks.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub loaded: usize,
    pub failed: usize,
    pub unloaded: usize,
    pub compiled: usize,
    pub from_cache: usize,
    pub reused: usize,
    /// Compiled by Winch, to be served while Cranelift compiles them.
    pub baseline: usize,
}

impl Summary {
    pub fn count(&mut self, origin: CodeOrigin) {
        if let Some(metrics) = metrics::get() {
            metrics.code_origin(origin);
        }
        match origin {
            CodeOrigin::Compiled => self.compiled += 1,
            CodeOrigin::Cache => self.from_cache += 1,
            CodeOrigin::Reused => self.reused += 1,
            CodeOrigin::Baseline => self.baseline += 1,
        }
    }
}
