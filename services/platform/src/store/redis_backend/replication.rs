//! On a cluster, a write is acknowledged once a replica holds it (or its
//! shard has none to wait for): what a failover would otherwise lose.

use std::sync::Arc;
use std::time::Duration;

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

use super::super::replicas::{ReplicaHealth, key_slot, parse};
use super::{Conn, RedisStore, StoreError, unavailable};

/// How long a write on a cluster waits for a replica to hold it: a
/// connected replica answers in well under a millisecond, so this bounds
/// only a lagging one, well inside any request's deadline.
const REPLICA_ACK: Duration = Duration::from_millis(250);

/// How much longer a write waits when its primary still has a replica
/// online that has not acknowledged it (a replica starved of CPU or of
/// network): after that the write is refused (503), not acknowledged,
/// since a failover to that replica would lose it. Measured: under the
/// whole test suite's load, 1 to 3 writes a run on its test clusters
/// waited past the first 250 ms (a log of them over five runs).
const LAGGING_REPLICA: Duration = Duration::from_millis(1_000);

impl RedisStore {
    /// On a cluster, waits until a replica of the written key's primary
    /// holds the write: replication is asynchronous, and a primary lost
    /// before replicating would take an acknowledged order with it at
    /// failover. WAIT counts the writes of the connection it is sent on,
    /// so it goes with a probe on a connection of its own (`acks`), shared
    /// by the writes of the primary waiting at once.
    ///
    /// A shard whose primary has no replica online (after a failover,
    /// until the lost node is replaced; or its replica just died) is not
    /// waited for: its writes are as safe as the shard can make them, and
    /// the state is said once (`replicas`), not for every write. A shard
    /// whose replica is online but does not acknowledge within
    /// [`REPLICA_ACK`] + [`LAGGING_REPLICA`] refuses the write: the caller
    /// answers 503 and the client retries (with its idempotency key).
    pub(super) async fn replicated(&self, full_key: &str) -> Result<(), StoreError> {
        let (Conn::Cluster(conn), Some(acks)) = (&self.conn, &self.acks) else {
            return Ok(());
        };
        let slot = key_slot(full_key.as_bytes());
        // Kept fresh while writes wait: it groups their waits by primary.
        if self.replicas.start_reading() {
            let (conn, replicas) = (conn.clone(), Arc::clone(&self.replicas));
            tokio::spawn(async move {
                // Done even if this task is dropped (at shutdown) midway.
                struct Done(Arc<ReplicaHealth>);
                impl Drop for Done {
                    fn drop(&mut self) {
                        self.0.read_done();
                    }
                }
                let done = Done(replicas);
                read_replicas(&conn, &done.0).await;
            });
        }
        if self.replicas.without_replica(slot) {
            if self.replicas.stale() {
                self.read_replicas(conn).await;
            }
            if self.replicas.without_replica(slot) {
                return Ok(());
            }
        }
        if acks
            .shared_round(slot, REPLICA_ACK)
            .await
            .map_err(StoreError::Unavailable)?
        {
            return Ok(());
        }
        metrics::counter!("redis_replica_wait_late_total").increment(1);
        if self.replicas.stale() {
            self.read_replicas(conn).await;
        }
        let primary = Route::with_key(full_key, SlotAddr::Master);
        let primary = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(primary));
        let role = conn
            .clone()
            .route_command(redis::cmd("ROLE"), primary)
            .await
            .map_err(unavailable)?;
        let lagging = || async {
            let acked = acks.round(slot, LAGGING_REPLICA).await;
            acked.map_err(StoreError::Unavailable)
        };
        match replicas_online(&role) {
            Some(0) => return Ok(()),
            Some(_) if lagging().await? => return Ok(()),
            Some(_) => tracing::warn!(
                slot,
                "a redis replica online did not acknowledge a write in time: write refused"
            ),
            None => tracing::warn!(slot, "the key's node is no longer a primary: write refused"),
        }
        metrics::counter!("redis_writes_unreplicated_total").increment(1);
        Err(StoreError::Unavailable(
            "no replica acknowledged the write in time".into(),
        ))
    }

    async fn read_replicas(&self, conn: &ClusterConnection) {
        read_replicas(conn, &self.replicas).await;
    }

    /// Primaries of the cluster without a connected replica, as last read
    /// (0 on one server, or before any write missed its replica).
    pub fn primaries_without_replica(&self) -> usize {
        self.replicas.lacking()
    }
}

/// Reads which primaries have a connected replica and their slots
/// (`CLUSTER NODES`, one node's view); a failed read keeps the last one.
async fn read_replicas(conn: &ClusterConnection, replicas: &ReplicaHealth) {
    let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random);
    let answer = conn
        .clone()
        .route_command(redis::cmd("CLUSTER").arg("NODES").clone(), routing)
        .await;
    match answer.and_then(|v| redis::from_redis_value::<String>(v).map_err(Into::into)) {
        Ok(text) => replicas.record(parse(&text)),
        // Said once until a reading succeeds (a store whose user may not
        // run CLUSTER NODES is asked every 2 s while writes wait).
        Err(e) if replicas.failed() => {
            tracing::warn!(error = %e, "the cluster's replicas could not be read")
        }
        Err(e) => tracing::debug!(error = %e, "the cluster's replicas could not be read"),
    }
}

/// How many replicas a `ROLE` answer of a primary lists (those online:
/// `["master", offset, [[ip, port, offset], ...]]`); `None` when the node
/// answered as a replica (a failover moved the slot on).
fn replicas_online(role: &Value) -> Option<usize> {
    let Value::Array(parts) = role else {
        return None;
    };
    let master = matches!(parts.first(), Some(Value::BulkString(b)) if b == b"master");
    match parts.get(2) {
        Some(Value::Array(replicas)) if master => Some(replicas.len()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::store::{Store, StoreError};
    use crate::testing::RedisCluster;

    /// A replica alive and connected but silent (stopped: as one starved
    /// of CPU) holds up its primary's writes and then has them refused,
    /// not acknowledged: acknowledged after 250 ms before, a failover to
    /// that replica could lose them. One that resumes within the longer
    /// wait lets the write through; a dead one (gone from its primary's
    /// replicas at once) holds nothing up.
    #[tokio::test]
    async fn a_write_no_replica_acknowledged_is_refused() {
        let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
        let store = Store::redis(&cluster.url, "r:").await.expect("connect");
        let (_, replica) = cluster.shard_of("r:k").expect("the key's shard");
        assert!(store.insert("k", b"0", None).await.unwrap());
        cluster.signal(replica, "STOP").unwrap();
        let refused = store.replace("k", 1, b"1", None).await;
        assert!(
            matches!(refused, Err(StoreError::Unavailable(_))),
            "{refused:?}"
        );
        let resume = async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cluster.signal(replica, "CONT").unwrap();
        };
        let (written, ()) = tokio::join!(store.replace("k", 2, b"2", None), resume);
        assert_eq!(written.unwrap(), Some(3), "the refused write was applied");
        cluster.signal(replica, "KILL").unwrap();
        assert_eq!(store.replace("k", 3, b"3", None).await.unwrap(), Some(4));
        assert_eq!(store.get("k").await.unwrap().unwrap().value, b"3");
    }

    /// A write waiting for its replica holds up no other command to the
    /// same primary: a read sent during the write's longer wait answers
    /// first (before, it queued behind that wait on the one connection to
    /// the primary and answered after the write was refused). The writes
    /// of one slot waiting at once are all answered when the replica is
    /// back.
    #[tokio::test]
    async fn a_write_waiting_for_its_replica_holds_up_no_read() {
        let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
        let store = Store::redis(&cluster.url, "r:").await.expect("connect");
        let (_, replica) = cluster.shard_of("r:{t}k").expect("the key's shard");
        assert!(store.insert("{t}k", b"0", None).await.unwrap());
        cluster.signal(replica, "STOP").unwrap();
        let write = store.replace("{t}k", 1, b"1", None);
        tokio::pin!(write);
        let read = async {
            tokio::time::sleep(Duration::from_millis(400)).await;
            store.get("{t}k").await
        };
        tokio::select! {
            biased;
            ended = &mut write => panic!("the write ended before the read: {ended:?}"),
            read = read => assert_eq!(read.unwrap().unwrap().value, b"1"),
        }
        let many = futures::future::join_all((0..40).map(|i| {
            let store = store.clone();
            async move { store.insert(&format!("{{t}}{i}"), b"x", None).await }
        }));
        let resume = async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cluster.signal(replica, "CONT").unwrap();
        };
        let (written, inserted, ()) = tokio::join!(write, many, resume);
        assert_eq!(written.unwrap(), Some(2));
        assert!(
            inserted.into_iter().all(|i| i.unwrap()),
            "every insert acknowledged"
        );
    }
}
