//! What the bench measured of one server at one load, as the report takes it.

use std::time::Duration;

use crate::stats::Summary;

/// What one server did at one HTTP load.
pub struct HttpFigures {
    pub throughput: f64,
    /// The server's CPU time over the calls it answered: steadier run to
    /// run than throughput at concurrency 1, which also waits on the client.
    pub server_cpu_per_call: Duration,
    pub latency: Summary,
}

/// What one server did over sequential stdio calls.
pub struct StdioFigures {
    pub latency: Summary,
    /// The server's CPU time over the timed calls, all its threads.
    pub server_cpu_per_call: Duration,
}
