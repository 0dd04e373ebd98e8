//! Which primaries of a Redis Cluster have a replica that can acknowledge
//! a write. A write waits for one (`WAIT 1`) so that an acknowledged order
//! survives its primary's loss; but after a failover the new primary has
//! no replica until an operator replaces the node, and waiting for one
//! that is not there cost every write to that shard its whole timeout
//! (logins 503, confirms 504, for as long as the shard stayed so). Here
//! the cluster's own view (`CLUSTER NODES`) says which slot ranges have no
//! connected replica: writes there are not waited for, the state is a
//! metric (`redis_primaries_without_replica`) and one log line when it
//! changes, and it is read again every few seconds while it lasts.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a reading of the cluster's replicas is trusted.
pub(super) const FRESH_FOR: Duration = Duration::from_secs(2);

/// A primary's slot ranges and how many replicas it has that are
/// connected and not failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Primary {
    pub id: String,
    pub slots: Vec<(u16, u16)>,
    pub replicas: u32,
}

/// The slot of a key, as Redis computes it: CRC16 (XMODEM) of the key, or
/// of its hash tag (`{tag}`), modulo 16,384.
pub(super) fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(key)) % 16_384
}

/// The primaries of a `CLUSTER NODES` answer, each with its connected
/// replicas: `<id> <addr> <flags> <primary> <ping> <pong> <epoch>
/// <link> <slot>...`. A replica counts unless it failed (`fail`, agreed
/// by the cluster) or its link is down: one only suspected (`fail?`) by
/// the node asked, with its link up, is a slow replica, and a write that
/// skipped it could be lost at a failover to it.
pub(super) fn parse(nodes: &str) -> Vec<Primary> {
    let lines: Vec<Vec<&str>> = nodes
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|f: &Vec<&str>| f.len() >= 8)
        .collect();
    let failed = |flags: &str| flags.split(',').any(|f| f == "fail" || f == "fail?");
    lines
        .iter()
        .filter(|f| f[2].split(',').any(|flag| flag == "master") && !failed(f[2]))
        .map(|f| {
            let slots = f[8..]
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| match s.split_once('-') {
                    Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                    None => s.parse().ok().map(|one| (one, one)),
                })
                .collect();
            let replicas = lines
                .iter()
                .filter(|r| r[3] == f[0] && r[2].split(',').any(|flag| flag == "slave"))
                .filter(|r| !r[2].split(',').any(|f| f == "fail") && r[7] == "connected")
                .count() as u32;
            Primary {
                id: f[0].to_string(),
                slots,
                replicas,
            }
        })
        .collect()
}

#[derive(Default)]
struct Reading {
    primaries: Vec<Primary>,
    at: Option<Instant>,
    /// When a reading was last begun in the background (at most one
    /// every [`FRESH_FOR`], whether it succeeds or not).
    tried: Option<Instant>,
    /// The last reading failed (said once, not at every attempt).
    failing: bool,
}

/// The last reading of the cluster's replicas.
#[derive(Default)]
pub(super) struct ReplicaHealth {
    reading: Mutex<Reading>,
    /// A reading is being taken (at most one at a time).
    reading_started: AtomicBool,
}

impl ReplicaHealth {
    /// Whether the last reading says `slot`'s primary has no replica to
    /// wait for (false when unknown: then a write waits, as it should).
    pub fn without_replica(&self, slot: u16) -> bool {
        let reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        reading
            .primaries
            .iter()
            .any(|p| p.replicas == 0 && p.slots.iter().any(|(a, b)| (*a..=*b).contains(&slot)))
    }

    /// Whether the last reading is older than [`FRESH_FOR`] (or none).
    pub fn stale(&self) -> bool {
        let reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        reading.at.is_none_or(|at| at.elapsed() >= FRESH_FOR)
    }

    /// The first slot of the primary that held `slot` at the last reading:
    /// the slots of one primary share it (None before any reading). Only
    /// a hint, which may be stale: whoever relies on it checks it.
    pub fn group(&self, slot: u16) -> Option<u16> {
        let reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let primary = reading
            .primaries
            .iter()
            .find(|p| p.slots.iter().any(|(a, b)| (*a..=*b).contains(&slot)))?;
        primary.slots.iter().map(|(a, _)| *a).min()
    }

    /// Marks the reading stale (the cluster is not as it said): to be taken
    /// again at once.
    pub fn forget(&self) {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        reading.at = None;
        reading.tried = None;
    }

    /// True for the one caller that is to take a new reading now: the last
    /// is stale, none was begun within [`FRESH_FOR`] (a store that refuses
    /// `CLUSTER NODES` is asked every 2 s, not at every write), and nobody
    /// is taking one. It calls [`ReplicaHealth::read_done`] after.
    pub fn start_reading(&self) -> bool {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let old = |t: Option<Instant>| t.is_none_or(|t| t.elapsed() >= FRESH_FOR);
        if !old(reading.at) || !old(reading.tried) {
            return false;
        }
        if self.reading_started.swap(true, Ordering::AcqRel) {
            return false;
        }
        reading.tried = Some(Instant::now());
        true
    }

    pub fn read_done(&self) {
        self.reading_started.store(false, Ordering::Release);
    }

    /// A reading failed: true when the one before had not (say it once).
    pub fn failed(&self) -> bool {
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        !std::mem::replace(&mut reading.failing, true)
    }

    /// Takes a new reading; says so (one log line, the metric) when the
    /// set of primaries without a replica changed.
    pub fn record(&self, primaries: Vec<Primary>) {
        let lacking = |ps: &[Primary]| -> Vec<String> {
            let mut ids: Vec<String> = ps
                .iter()
                .filter(|p| p.replicas == 0)
                .map(|p| p.id.clone())
                .collect();
            ids.sort();
            ids
        };
        let mut reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        let (before, now) = (lacking(&reading.primaries), lacking(&primaries));
        reading.primaries = primaries;
        reading.at = Some(Instant::now());
        reading.failing = false;
        drop(reading);
        if before != now {
            metrics::gauge!("redis_primaries_without_replica").set(now.len() as f64);
            if now.is_empty() {
                tracing::info!("every redis primary has a replica again: writes wait for one");
            } else {
                tracing::warn!(
                    primaries = now.len(),
                    "a redis primary has no connected replica: writes to it are not waited for \
                     until one is back (replace the lost node)"
                );
            }
        }
    }

    /// Primaries without a replica in the last reading.
    pub fn lacking(&self) -> usize {
        let reading = self.reading.lock().unwrap_or_else(|p| p.into_inner());
        reading.primaries.iter().filter(|p| p.replicas == 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_own() {
        // From `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"foo"), 12_182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"{}x"), key_slot(b"{}x"));
        assert_eq!(
            key_slot(b"a{}b"),
            crc16::State::<crc16::XMODEM>::calculate(b"a{}b") % 16_384
        );
    }

    #[test]
    fn a_primary_whose_replica_failed_has_none() {
        let nodes = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
b1 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922
c1 127.0.0.1:7002@17002 master,fail - 0 0 3 disconnected
d1 127.0.0.1:7003@17003 slave a1 0 0 1 connected
e1 127.0.0.1:7004@17004 master - 0 0 7 connected 10923-16383
f1 127.0.0.1:7005@17005 slave,fail b1 0 0 2 disconnected
g1 127.0.0.1:7006@17006 slave,fail? e1 0 0 7 disconnected
h1 127.0.0.1:7007@17007 slave,fail? a1 0 0 1 connected
";
        let primaries = parse(nodes);
        let replicas: Vec<(&str, u32)> = primaries
            .iter()
            .map(|p| (p.id.as_str(), p.replicas))
            .collect();
        assert_eq!(replicas, [("a1", 2), ("b1", 0), ("e1", 0)]);
        let health = ReplicaHealth::default();
        assert!(health.stale());
        health.record(primaries);
        assert!(!health.stale());
        assert!(!health.without_replica(100));
        assert!(health.without_replica(6000));
        assert!(health.without_replica(16_383));
        assert_eq!(health.lacking(), 2);
        // Slots are grouped by the primary holding them at the reading.
        assert_eq!(health.group(100), Some(0));
        assert_eq!(health.group(5_460), Some(0));
        assert_eq!(health.group(5_461), Some(5_461));
        assert_eq!(health.group(16_383), Some(10_923));
        // One reader at a time, only of a stale reading, and not again
        // within 2 s of the last begun (unless the reading was wrong).
        assert!(!health.start_reading(), "fresh");
        health.forget();
        assert!(health.start_reading());
        assert!(!health.start_reading(), "one is being taken");
        health.read_done();
        assert!(!health.start_reading(), "one was begun just now");
        health.forget();
        assert!(health.start_reading());
        health.read_done();
        // A failing reading is said once, again after one succeeded.
        assert!(health.failed());
        assert!(!health.failed());
        health.record(parse(nodes));
        assert!(health.failed());
    }
}
