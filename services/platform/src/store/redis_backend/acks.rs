//! Waiting for a cluster's replicas, apart from the requests' connection
//! and once for many writes.
//!
//! `WAIT` blocks the connection it is sent on until a replica answers, and
//! a cluster client has one multiplexed connection per node: sent there,
//! every read and write to that primary queued behind each write's wait
//! (measured: one service's connection to each primary blocked in 10-13%
//! of the samples of a checkout bench; with a replica starved of CPU, for
//! up to the whole 1.25 s bound). So waits go on connections of their own
//! (lanes), and the writes of one slot waiting at once share one wait.
//!
//! `WAIT` counts the writes of its own connection, and a lane writes
//! nothing else: each round writes a probe in the slot first (a key of
//! its own, expiring), whose offset follows every write the primary made
//! before it, the waiting callers' included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use tokio::sync::oneshot;

use super::super::replicas::key_slot;

/// Connections for waits: the rounds of as many slots of one primary can
/// wait side by side (one connection per node each).
pub(super) const LANES: usize = 4;

/// How long a probe key outlives its round (one per slot at most).
const PROBE_TTL_MS: u64 = 60_000;

/// A round's answer for everyone in it: acknowledged within the bound, or
/// why the round failed.
type Outcome = Result<bool, String>;

pub(super) struct Acks {
    lanes: Vec<ClusterConnection>,
    prefix: Arc<str>,
    /// Slots with a round running, and who waits for the next one.
    waiting: Mutex<HashMap<u16, Vec<oneshot::Sender<Outcome>>>>,
}

impl Acks {
    pub fn new(lanes: Vec<ClusterConnection>, prefix: Arc<str>) -> Self {
        assert!(!lanes.is_empty(), "at least one lane");
        Self {
            lanes,
            prefix,
            waiting: Mutex::default(),
        }
    }

    /// Whether a replica of `slot`'s primary holds, within `bound`, every
    /// write the primary made to it before this call. A round running
    /// already may have written its probe before the caller's write, so
    /// the caller joins the next one, which the same task runs after it.
    pub async fn shared_round(self: &Arc<Self>, slot: u16, bound: Duration) -> Outcome {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
            match waiting.get_mut(&slot) {
                Some(next) => {
                    next.push(tx);
                    false
                }
                None => {
                    waiting.insert(slot, vec![tx]);
                    true
                }
            }
        };
        if start {
            tokio::spawn(Arc::clone(self).drive(slot, bound));
        }
        rx.await
            .unwrap_or_else(|_| Err("the replica wait was abandoned".into()))
    }

    /// Runs rounds for `slot` while anyone waits for one.
    async fn drive(self: Arc<Self>, slot: u16, bound: Duration) {
        // Whatever ends this task, the slot is free again and those left
        // waiting are answered (their senders dropped: an error).
        struct Release<'a>(&'a Acks, u16);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                let mut waiting = self.0.waiting.lock().unwrap_or_else(|p| p.into_inner());
                waiting.remove(&self.1);
            }
        }
        let _release = Release(&self, slot);
        loop {
            let batch = {
                let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
                match waiting.get_mut(&slot) {
                    Some(next) if !next.is_empty() => std::mem::take(next),
                    _ => return,
                }
            };
            metrics::counter!("redis_replica_wait_rounds_total").increment(1);
            metrics::counter!("redis_replica_wait_writes_total").increment(batch.len() as u64);
            let outcome = self.round(slot, bound).await;
            for waiter in batch {
                let _ = waiter.send(outcome.clone());
            }
        }
    }

    /// One round on `slot`'s lane: the probe, then `WAIT 1 bound`, in one
    /// round trip to the slot's primary.
    pub async fn round(&self, slot: u16, bound: Duration) -> Outcome {
        let probe = format!("{}acked:{{{}}}", self.prefix, slot_tag(slot));
        if key_slot(probe.as_bytes()) != slot {
            return Err("the store's prefix holds a hash tag of another slot".into());
        }
        let mut pipe = redis::pipe();
        pipe.cmd("SET")
            .arg(&probe)
            .arg(1)
            .arg("PX")
            .arg(PROBE_TTL_MS);
        pipe.cmd("WAIT").arg(1).arg(bound.as_millis() as u64);
        let route = SingleNodeRoutingInfo::SpecificNode(Route::new(slot, SlotAddr::Master));
        let mut lane = self.lanes[usize::from(slot) % self.lanes.len()].clone();
        match lane.route_pipeline(pipe, 0, 2, route).await {
            Ok(values) => match values.as_slice() {
                [Value::Okay, Value::Int(replicas)] => Ok(*replicas > 0),
                // A probe not written proves nothing about the writes.
                other => Err(format!("unexpected answer to a replica wait: {other:?}")),
            },
            Err(e) => Err(e.to_string()),
        }
    }
}

/// For each slot, a short string that hashes to it (`{tag}` puts a key in
/// its slot): the first number whose decimal digits do, found once.
fn slot_tag(slot: u16) -> u32 {
    static TAGS: OnceLock<Vec<u32>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        let mut tags = vec![u32::MAX; 16_384];
        let mut missing = tags.len();
        let mut n = 0u32;
        while missing > 0 {
            let slot = usize::from(key_slot(n.to_string().as_bytes()));
            if tags[slot] == u32::MAX {
                tags[slot] = n;
                missing -= 1;
            }
            n += 1;
        }
        tags
    });
    tags[usize::from(slot)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_has_a_tag_that_hashes_to_it() {
        for slot in [0, 1, 866, 12_182, 16_383] {
            let key = format!("p:acked:{{{}}}", slot_tag(slot));
            assert_eq!(key_slot(key.as_bytes()), slot, "{key}");
        }
        let distinct: std::collections::HashSet<u32> = (0..16_384).map(slot_tag).collect();
        assert_eq!(distinct.len(), 16_384);
    }
}
