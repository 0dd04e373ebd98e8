//! Timestamps as resources carry them: UTC, to the millisecond.

use prost_types::Timestamp;

/// Now, to the millisecond.
pub fn now() -> Timestamp {
    let t = Timestamp::from(std::time::SystemTime::now());
    Timestamp {
        seconds: t.seconds,
        nanos: t.nanos - t.nanos % 1_000_000,
    }
}
