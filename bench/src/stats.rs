//! Percentiles of a set of durations.

use std::time::Duration;

use serde_json::{Value, json};

#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub p50: Duration,
    pub p99: Duration,
    pub count: usize,
}

impl Summary {
    pub fn of(mut samples: Vec<Duration>) -> Self {
        assert!(!samples.is_empty(), "no samples");
        samples.sort();
        let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
        Self {
            p50: at(0.5),
            p99: at(0.99),
            count: samples.len(),
        }
    }

    /// As `of`, with zeros (and a count of 0) for no samples.
    pub fn of_any(samples: Vec<Duration>) -> Self {
        match samples.is_empty() {
            true => Self {
                p50: Duration::ZERO,
                p99: Duration::ZERO,
                count: 0,
            },
            false => Self::of(samples),
        }
    }

    pub fn to_json(self) -> Value {
        json!({
            "p50_us": micros(self.p50),
            "p99_us": micros(self.p99),
            "count": self.count,
        })
    }
}

pub fn micros(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e7).round() / 10.0
}

/// A duration for a table: µs below 10 ms, ms above.
pub fn human(duration: Duration) -> String {
    let us = duration.as_secs_f64() * 1e6;
    if us < 10_000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_set() {
        let samples = (1..=100).map(Duration::from_millis).collect();
        let summary = Summary::of(samples);
        assert_eq!(summary.p50, Duration::from_millis(51));
        assert_eq!(summary.p99, Duration::from_millis(99));
        assert_eq!(summary.count, 100);
        assert_eq!(human(Duration::from_micros(250)), "250 µs");
        assert_eq!(human(Duration::from_millis(25)), "25.0 ms");
    }
}
