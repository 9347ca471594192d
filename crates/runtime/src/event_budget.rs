//! What one call may send towards the client and the operator through the
//! `host` interface: `host.log` messages and progress.
//!
//! Each message already has a length cap; this bounds how many there are
//! and their total, so a plugin logging in a loop cannot fill the server log
//! or the client's stream. The budget is `[limits] log-output` bytes and
//! `MAX_EVENTS` events per call; past it, events are dropped and counted,
//! and the count is logged once when the call ends.

/// Log and progress events one call may send.
pub const MAX_EVENTS: u32 = 1024;

/// What an event costs beyond its text (a progress update without a
/// message still takes a line on the client's stream).
const EVENT_OVERHEAD: u64 = 32;

pub struct EventBudget {
    bytes_left: u64,
    events_left: u32,
    dropped_events: u64,
    dropped_bytes: u64,
}

impl EventBudget {
    pub fn new(bytes: u64) -> Self {
        Self {
            bytes_left: bytes,
            events_left: MAX_EVENTS,
            dropped_events: 0,
            dropped_bytes: 0,
        }
    }

    /// Whether an event with `text_bytes` of text may be sent; charges it if so.
    pub fn admit(&mut self, text_bytes: usize) -> bool {
        let cost = text_bytes as u64 + EVENT_OVERHEAD;
        if self.events_left == 0 || cost > self.bytes_left {
            self.dropped_events += 1;
            self.dropped_bytes += text_bytes as u64;
            return false;
        }
        self.events_left -= 1;
        self.bytes_left -= cost;
        true
    }

    /// `(events, text bytes)` dropped so far, if any.
    pub fn dropped(&self) -> Option<(u64, u64)> {
        (self.dropped_events > 0).then_some((self.dropped_events, self.dropped_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_count_are_both_bounded() {
        let mut budget = EventBudget::new(1000);
        assert!(budget.admit(400));
        assert!(budget.admit(400));
        assert!(!budget.admit(400), "over the bytes");
        assert!(budget.admit(100), "a smaller one still fits");
        assert_eq!(budget.dropped(), Some((1, 400)));

        let mut budget = EventBudget::new(u64::MAX);
        for _ in 0..MAX_EVENTS {
            assert!(budget.admit(0));
        }
        assert!(!budget.admit(0), "over the count");
        assert_eq!(budget.dropped(), Some((1, 0)));
    }
}
