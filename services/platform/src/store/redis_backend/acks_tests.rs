use std::time::Duration;

use redis::cluster::ClusterClient;

use super::*;
use crate::store::replicas::{Primary, parse};
use crate::testing::RedisCluster;

#[test]
fn a_caller_after_the_last_round_starts_a_new_one() {
    let mut waiting = Waiters::new();
    let (first, mut answer) = oneshot::channel();
    assert!(join(&mut waiting, 7, (7, first)), "no round ran: start one");
    let batch = next_batch(&mut waiting, 7).expect("the first caller");
    let (second, _) = oneshot::channel();
    assert!(
        !join(&mut waiting, 7, (8, second)),
        "a round runs: join the next"
    );
    for (_, waiter) in batch {
        waiter.send(Ok(true)).unwrap();
    }
    assert_eq!(answer.try_recv().unwrap(), Ok(true));
    assert_eq!(next_batch(&mut waiting, 7).map(|b| b.len()), Some(1));
    // The driver finds no one and ends: a caller now starts its own
    // task (before, it joined the ending one and was dropped).
    assert!(next_batch(&mut waiting, 7).is_none());
    let (third, mut unanswered) = oneshot::channel();
    assert!(
        join(&mut waiting, 7, (7, third)),
        "the group is free: start one"
    );
    assert!(matches!(
        unanswered.try_recv(),
        Err(oneshot::error::TryRecvError::Empty)
    ));
}

/// A round answers for a slot only when that slot's check was answered by
/// the node that took the probe: a check refused (the slot moved to
/// another node, a replica answering) says nothing of that slot's writes,
/// whatever the `WAIT` counted; nor does a round whose probe was refused.
#[test]
fn a_round_answers_only_for_the_slots_checked() {
    // Any answer but a count (an error value cannot be made outside the crate).
    let moved = Value::SimpleString("MOVED 9 127.0.0.1:7001".into());
    let acked = [Value::Okay, Value::Int(1)];
    let answer = [&[Value::Int(0), moved.clone(), Value::Int(1)][..], &acked].concat();
    assert_eq!(
        covered(&[1, 9, 30], &answer),
        [Some(true), None, Some(true)]
    );
    let none_acked = [Value::Int(1), Value::Okay, Value::Int(0)];
    assert_eq!(covered(&[1], &none_acked), [Some(false)]);
    let unwritten = [Value::Int(1), Value::Int(1), moved.clone(), Value::Int(1)];
    assert_eq!(covered(&[1, 9], &unwritten), [None, None]);
    // Not a check for each slot, a probe and a count: nothing covered.
    assert_eq!(
        covered(&[1, 9], &[Value::Int(0), Value::Okay, Value::Int(1)]),
        [None, None]
    );
    let waiters: Vec<Waiter> = [30, 1, 30, 9]
        .into_iter()
        .map(|slot| (slot, oneshot::channel().0))
        .collect();
    assert_eq!(slots_of(&waiters), [1, 9, 30]);
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

async fn acks_on(cluster: &RedisCluster, replicas: Arc<ReplicaHealth>) -> Arc<Acks> {
    let client = ClusterClient::builder(cluster.url.split(','))
        .retries(2)
        .build()
        .unwrap();
    let lanes = (0..LANES).map(|_| client.get_async_connection());
    let lanes = futures::future::try_join_all(lanes).await.unwrap();
    Arc::new(Acks::new(lanes, "p:".into(), replicas))
}

/// The `WAIT`s and `SET`s the node on `port` ran since the last call.
async fn waits_on(port: u16) -> (u64, u64) {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut conn)
        .await
        .unwrap();
    let () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut conn)
        .await
        .unwrap();
    let calls = |command: &str| {
        let line = stats.lines().find(|l| l.starts_with(command));
        let calls = line.and_then(|l| l.split(['=', ',']).nth(1)?.parse().ok());
        calls.unwrap_or(0)
    };
    (calls("cmdstat_wait:"), calls("cmdstat_set:"))
}

/// The writes of one primary waiting at once share one `WAIT` however
/// many slots they are in (before, one a slot: a confirm's 9 rounds on a
/// cluster were nearly as many as its writes).
#[tokio::test]
async fn the_writes_of_one_primary_share_one_wait() {
    let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
    let replicas = Arc::new(ReplicaHealth::default());
    let acks = acks_on(&cluster, Arc::clone(&replicas)).await;
    let (primary, _) = cluster.shard_of("{a}").unwrap();
    let mut lane = acks.lanes[0].clone();
    let nodes: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query_async(&mut lane)
        .await
        .unwrap();
    replicas.record(parse(&nodes));
    let group = replicas.group(key_slot(b"{a}")).expect("the cluster read");
    let slots: Vec<u16> = (0..16_384)
        .filter(|s| replicas.group(*s) == Some(group))
        .step_by(997)
        .collect();
    assert!(slots.len() >= 5, "{slots:?}");
    waits_on(primary).await;
    let bound = Duration::from_millis(500);
    let rounds = slots.iter().map(|slot| acks.shared_round(*slot, bound));
    let answers = futures::future::join_all(rounds).await;
    assert!(answers.iter().all(|a| *a == Ok(true)), "{answers:?}");
    let (waits, sets) = waits_on(primary).await;
    assert_eq!(waits, 1, "one WAIT for {} slots", slots.len());
    assert_eq!(sets, 1, "one probe written for {} slots", slots.len());
}

/// A reading that is wrong (one primary said to hold every slot, as a
/// stale one after slots moved) groups the writes of two primaries: each
/// is answered for its own primary, the other's by a round of its own,
/// whose replica is stopped: not acknowledged (a round trusting the
/// reading would have said it was).
#[tokio::test]
async fn a_wrong_reading_answers_no_write_for_another_primary() {
    let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
    let replicas = Arc::new(ReplicaHealth::default());
    replicas.record(vec![Primary {
        id: "all".into(),
        slots: vec![(0, 16_383)],
        replicas: 1,
    }]);
    let acks = acks_on(&cluster, Arc::clone(&replicas)).await;
    let tag = |slot: u16| format!("p:acked:{{{}}}", slot_tag(slot));
    let (first, _) = cluster.shard_of(&tag(0)).unwrap();
    let (last, stopped) = cluster.shard_of(&tag(16_383)).unwrap();
    assert_ne!(first, last, "slots 0 and 16383 on two primaries");
    cluster.signal(stopped, "STOP").unwrap();
    let bound = Duration::from_millis(200);
    let (held, lagging) = tokio::join!(
        acks.shared_round(0, bound),
        acks.shared_round(16_383, bound)
    );
    cluster.signal(stopped, "CONT").unwrap();
    assert_eq!(held, Ok(true));
    assert_eq!(
        lagging,
        Ok(false),
        "acknowledged by another primary's replica"
    );
    assert!(replicas.stale(), "the wrong reading is to be taken again");
}
