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
use std::collections::hash_map::Entry;
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
    waiting: Mutex<Waiters>,
}

type Waiters = HashMap<u16, Vec<oneshot::Sender<Outcome>>>;

/// Puts `waiter` in `slot`'s next round: true when no task runs the
/// slot's rounds, so the caller starts one.
fn join(waiting: &mut Waiters, slot: u16, waiter: oneshot::Sender<Outcome>) -> bool {
    match waiting.entry(slot) {
        Entry::Occupied(mut next) => {
            next.get_mut().push(waiter);
            false
        }
        Entry::Vacant(free) => {
            free.insert(vec![waiter]);
            true
        }
    }
}

/// Takes those waiting for `slot`'s next round; with none, frees the slot
/// in the same step (under the same lock), so that a caller coming after
/// starts a task of its own. Freed in a later step, a caller in between
/// joined a task that was ending and was dropped unanswered ("abandoned":
/// one checkout open of about 1,800 answered 503 in three cluster benches
/// of five).
fn next_batch(waiting: &mut Waiters, slot: u16) -> Option<Vec<oneshot::Sender<Outcome>>> {
    match waiting.get_mut(&slot) {
        Some(next) if !next.is_empty() => Some(std::mem::take(next)),
        _ => {
            waiting.remove(&slot);
            None
        }
    }
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
        if join(&mut self.waiting(), slot, tx) {
            tokio::spawn(Arc::clone(self).drive(slot, bound));
        }
        rx.await
            .unwrap_or_else(|_| Err("the replica wait was abandoned".into()))
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs rounds for `slot` while anyone waits for one.
    async fn drive(self: Arc<Self>, slot: u16, bound: Duration) {
        // Should this task end before it found no one waiting (cancelled
        // at shutdown), the slot is free again and those left waiting are
        // answered (their senders dropped: an error).
        struct Release<'a>(&'a Acks, u16, bool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if !self.2 {
                    self.0.waiting().remove(&self.1);
                }
            }
        }
        let mut release = Release(&self, slot, false);
        loop {
            let Some(batch) = next_batch(&mut self.waiting(), slot) else {
                release.2 = true;
                return;
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
        let started = std::time::Instant::now();
        let answer = lane.route_pipeline(pipe, 0, 2, route).await;
        metrics::histogram!("redis_replica_wait_round_seconds")
            .record(started.elapsed().as_secs_f64());
        match answer {
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
    fn a_caller_after_the_last_round_starts_a_new_one() {
        let mut waiting = Waiters::new();
        let (first, mut answer) = oneshot::channel();
        assert!(join(&mut waiting, 7, first), "no round ran: start one");
        let batch = next_batch(&mut waiting, 7).expect("the first caller");
        let (second, _) = oneshot::channel();
        assert!(
            !join(&mut waiting, 7, second),
            "a round runs: join the next"
        );
        for waiter in batch {
            waiter.send(Ok(true)).unwrap();
        }
        assert_eq!(answer.try_recv().unwrap(), Ok(true));
        assert_eq!(next_batch(&mut waiting, 7).map(|b| b.len()), Some(1));
        // The driver finds no one and ends: a caller now starts its own
        // task (before, it joined the ending one and was dropped).
        assert!(next_batch(&mut waiting, 7).is_none());
        let (third, mut unanswered) = oneshot::channel();
        assert!(join(&mut waiting, 7, third), "the slot is free: start one");
        assert!(matches!(
            unanswered.try_recv(),
            Err(oneshot::error::TryRecvError::Empty)
        ));
    }

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
