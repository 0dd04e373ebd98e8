//! A circuit breaker per peer: after `threshold` failed calls in a row
//! (unreachable: see `call::record` for what counts) calls to it fail at
//! once for `open_for`, so a dead service costs neither the caller's time nor its own
//! recovery. Then calls go through again; the first failure re-opens it,
//! the first success closes it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    open_for: Duration,
    failures: AtomicU32,
    /// Milliseconds since the epoch until which calls are refused.
    open_until: AtomicU64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Breaker {
    pub fn new(threshold: u32, open_for: Duration) -> Self {
        Self {
            threshold: threshold.max(1),
            open_for,
            failures: AtomicU32::new(0),
            open_until: AtomicU64::new(0),
        }
    }

    /// Whether a call may go through now.
    pub fn allows(&self) -> bool {
        now_ms() >= self.open_until.load(Ordering::Acquire)
    }

    /// Counts a success; true when the circuit had opened (it closes).
    pub fn succeeded(&self) -> bool {
        let before = self.failures.swap(0, Ordering::AcqRel);
        before > 0 && before >= self.threshold - 1 && self.threshold > 1
    }

    /// Counts a failure; true when it opened the circuit.
    pub fn failed(&self) -> bool {
        let failures = self.failures.fetch_add(1, Ordering::AcqRel) + 1;
        if failures < self.threshold {
            return false;
        }
        self.open_until.store(
            now_ms() + self.open_for.as_millis() as u64,
            Ordering::Release,
        );
        // Once it closes again, one more failure is enough to re-open it.
        self.failures.store(self.threshold - 1, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_reopens_on_one_failure() {
        let b = Breaker::new(3, Duration::from_millis(40));
        assert!(!b.failed() && !b.failed() && b.allows());
        assert!(b.failed());
        assert!(!b.allows(), "open");
        std::thread::sleep(Duration::from_millis(60));
        assert!(b.allows(), "closes after open_for");
        assert!(b.failed(), "the first failure after re-opens");
        std::thread::sleep(Duration::from_millis(60));
        b.succeeded();
        assert!(!b.failed(), "a success resets the count");
    }
}
