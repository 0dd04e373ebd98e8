//! Waiting for a cluster's replicas, apart from the requests' connection
//! and once for many writes.
//!
//! `WAIT` blocks the connection it is sent on until a replica answers, and
//! a cluster client has one multiplexed connection per node: sent there,
//! every read and write to that primary queued behind each write's wait
//! (measured: one service's connection to each primary blocked in 10-13%
//! of the samples of a checkout bench; with a replica starved of CPU, for
//! up to the whole 1.25 s bound). So waits go on connections of their own
//! (lanes), and the writes of one primary waiting at once share one wait.
//!
//! `WAIT` counts the writes of its own connection, and a lane writes
//! nothing else: each round writes a probe first (a key of its own,
//! expiring), whose offset follows every write the primary made before
//! it, the waiting callers' included. Which primary holds a slot is the
//! cluster's last reading (`replicas`), a hint only: a write is answered
//! by a round only when its slot was checked (`EXISTS` of the slot's probe
//! key, which only the node holding the slot answers) on the node that
//! took the probe and ran the `WAIT`, in the same pipeline; any other
//! waits in a round of its own slot.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, SingleNodeRoutingInfo, SlotAddr};
use tokio::sync::oneshot;

use super::super::replicas::{ReplicaHealth, key_slot};

/// Connections for waits: the rounds of as many primaries, or slots, can
/// wait side by side on one node's connections.
pub(super) const LANES: usize = 4;

/// How long a probe key outlives its round (one per slot at most: a
/// group's round writes its first slot's, a round alone its slot's).
const PROBE_TTL_MS: u64 = 60_000;

/// A round's answer for everyone in it: acknowledged within the bound, or
/// why the round failed.
type Outcome = Result<bool, String>;

pub(super) struct Acks {
    lanes: Vec<ClusterConnection>,
    prefix: Arc<str>,
    /// Which primary holds which slots (the rounds' groups).
    replicas: Arc<ReplicaHealth>,
    /// Groups with a round running, and who waits for the next one.
    waiting: Mutex<Waiters>,
}

/// A caller waiting: its write's slot, and where its answer goes.
type Waiter = (u16, oneshot::Sender<Outcome>);

/// By group: the first slot of a primary (or a slot alone, before the
/// cluster was read).
type Waiters = HashMap<u16, Vec<Waiter>>;

/// Puts `waiter` in `group`'s next round: true when no task runs the
/// group's rounds, so the caller starts one.
fn join(waiting: &mut Waiters, group: u16, waiter: Waiter) -> bool {
    match waiting.entry(group) {
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

/// Takes those waiting for `group`'s next round; with none, frees the
/// group in the same step (under the same lock), so that a caller coming
/// after starts a task of its own. Freed in a later step, a caller in
/// between joined a task that was ending and was dropped unanswered
/// ("abandoned": one checkout open of about 1,800 answered 503 in three
/// cluster benches of five).
fn next_batch(waiting: &mut Waiters, group: u16) -> Option<Vec<Waiter>> {
    match waiting.get_mut(&group) {
        Some(next) if !next.is_empty() => Some(std::mem::take(next)),
        _ => {
            waiting.remove(&group);
            None
        }
    }
}

/// The distinct slots of a batch, in order.
fn slots_of(batch: &[Waiter]) -> Vec<u16> {
    let mut slots: Vec<u16> = batch.iter().map(|(slot, _)| *slot).collect();
    slots.sort_unstable();
    slots.dedup();
    slots
}

/// What a round's pipeline answered (`pipeline`: each of `slots`' check,
/// the probe, the `WAIT`): for each slot checked on the node that took the
/// probe, whether a replica acknowledged it; None for the others, and for
/// all when the probe was not written or the answer is not that shape.
fn covered(slots: &[u16], answer: &[Value]) -> Vec<Option<bool>> {
    let n = slots.len();
    let acked = match answer.get(n..) {
        Some([Value::Okay, Value::Int(replicas)]) => *replicas > 0,
        _ => return vec![None; n],
    };
    (answer[..n].iter())
        .map(|check| matches!(check, Value::Int(_)).then_some(acked))
        .collect()
}

impl Acks {
    pub fn new(
        lanes: Vec<ClusterConnection>,
        prefix: Arc<str>,
        replicas: Arc<ReplicaHealth>,
    ) -> Self {
        assert!(!lanes.is_empty(), "at least one lane");
        Self {
            lanes,
            prefix,
            replicas,
            waiting: Mutex::default(),
        }
    }

    /// Whether a replica of `slot`'s primary holds, within `bound`, every
    /// write the primary made to it before this call. A round running
    /// already may have written its probe before the caller's write, so
    /// the caller joins the next one, which the same task runs after it.
    pub async fn shared_round(self: &Arc<Self>, slot: u16, bound: Duration) -> Outcome {
        let (tx, rx) = oneshot::channel();
        let group = self.replicas.group(slot).unwrap_or(slot);
        if join(&mut self.waiting(), group, (slot, tx)) {
            tokio::spawn(Arc::clone(self).drive(group, bound));
        }
        rx.await
            .unwrap_or_else(|_| Err("the replica wait was abandoned".into()))
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiters> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs rounds for `group` while anyone waits for one.
    async fn drive(self: Arc<Self>, group: u16, bound: Duration) {
        // Should this task end before it found no one waiting (cancelled
        // at shutdown), the group is free again and those left waiting are
        // answered (their senders dropped: an error).
        struct Release<'a>(&'a Acks, u16, bool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if !self.2 {
                    self.0.waiting().remove(&self.1);
                }
            }
        }
        let mut release = Release(&self, group, false);
        loop {
            let Some(batch) = next_batch(&mut self.waiting(), group) else {
                release.2 = true;
                return;
            };
            metrics::counter!("redis_replica_wait_rounds_total").increment(1);
            metrics::counter!("redis_replica_wait_writes_total").increment(batch.len() as u64);
            let slots = slots_of(&batch);
            let outcomes = self.rounds(group, &slots, bound).await;
            for (slot, waiter) in batch {
                let at = slots.binary_search(&slot).expect("a slot of the batch");
                let _ = waiter.send(outcomes[at].clone());
            }
        }
    }

    /// Each of `slots`' outcome: one round for them all on `group`'s
    /// primary, then a round of its own for each slot that round did not
    /// cover (the primary is not who the reading said).
    async fn rounds(&self, group: u16, slots: &[u16], bound: Duration) -> Vec<Outcome> {
        if let [slot] = slots {
            return vec![self.round(*slot, bound).await];
        }
        let answer = self.pipeline(group, slots, bound).await;
        let covered = match &answer {
            Ok(values) => covered(slots, values),
            Err(_) => vec![None; slots.len()],
        };
        if covered.iter().any(Option::is_none) {
            self.replicas.forget();
        }
        let alone = slots
            .iter()
            .zip(&covered)
            .map(|(slot, covered)| async move {
                match covered {
                    Some(acked) => Ok(*acked),
                    None => self.round(*slot, bound).await,
                }
            });
        futures::future::join_all(alone).await
    }

    /// One round on `slot`'s lane: the probe, then `WAIT 1 bound`, in one
    /// round trip to the slot's primary.
    pub async fn round(&self, slot: u16, bound: Duration) -> Outcome {
        let answer = self.pipeline(slot, &[], bound).await?;
        match answer.as_slice() {
            [Value::Okay, Value::Int(replicas)] => Ok(*replicas > 0),
            // A probe not written proves nothing about the writes.
            other => Err(format!("unexpected answer to a replica wait: {other:?}")),
        }
    }

    /// One round trip to the primary of slot `route` (on a lane of its
    /// own): `EXISTS` of each of `slots`' probe keys (a read, answered
    /// only by the node holding the slot: a check, not replicated), the
    /// probe written in `route`, then `WAIT 1 bound`; the answers as they
    /// are. One write a round, however many slots it answers for.
    async fn pipeline(
        &self,
        route: u16,
        slots: &[u16],
        bound: Duration,
    ) -> Result<Vec<Value>, String> {
        let mut pipe = redis::pipe();
        for slot in slots {
            pipe.cmd("EXISTS").arg(self.probe(*slot)?);
        }
        pipe.cmd("SET")
            .arg(self.probe(route)?)
            .arg(1)
            .arg("PX")
            .arg(PROBE_TTL_MS);
        pipe.cmd("WAIT").arg(1).arg(bound.as_millis() as u64);
        let to = SingleNodeRoutingInfo::SpecificNode(Route::new(route, SlotAddr::Master));
        let mut lane = self.lanes[usize::from(route) % self.lanes.len()].clone();
        let started = std::time::Instant::now();
        let answer = lane.route_pipeline(pipe, 0, slots.len() + 2, to).await;
        metrics::histogram!("redis_replica_wait_round_seconds")
            .record(started.elapsed().as_secs_f64());
        answer.map_err(|e| e.to_string())
    }

    /// The probe key of `slot`.
    fn probe(&self, slot: u16) -> Result<String, String> {
        let probe = format!("{}acked:{{{}}}", self.prefix, slot_tag(slot));
        if key_slot(probe.as_bytes()) != slot {
            return Err("the store's prefix holds a hash tag of another slot".into());
        }
        Ok(probe)
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
#[path = "acks_tests.rs"]
mod tests;
