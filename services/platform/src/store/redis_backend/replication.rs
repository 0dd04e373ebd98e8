//! On a cluster, a write is acknowledged once a replica holds it (or its
//! shard has none to wait for): what a failover would otherwise lose.

use std::time::Duration;

use redis::Value;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

use super::super::replicas::{key_slot, parse};
use super::{Conn, RedisStore, StoreError, unavailable};

/// How long a write on a cluster waits for a replica to hold it: a
/// connected replica answers in well under a millisecond, so this bounds
/// only a lagging one, well inside any request's deadline.
const REPLICA_ACK: Duration = Duration::from_millis(250);

impl RedisStore {
    /// On a cluster, waits (up to [`REPLICA_ACK`]) until a replica of the
    /// written key's primary holds the write: replication is asynchronous,
    /// and a primary lost before replicating would take an acknowledged
    /// order with it at failover. WAIT counts the writes of the connection
    /// it is sent on, so it goes to that primary's one connection.
    ///
    /// A shard whose primary has no connected replica (after a failover,
    /// until the lost node is replaced) is not waited for: its writes are
    /// as safe as the shard can make them, and the state is said once
    /// (`replicas`), not for every write.
    pub(super) async fn replicated(&self, full_key: &str) -> Result<(), StoreError> {
        let Conn::Cluster(conn) = &self.conn else {
            return Ok(());
        };
        let slot = key_slot(full_key.as_bytes());
        if self.replicas.without_replica(slot) {
            if self.replicas.stale() {
                self.read_replicas(conn).await;
            }
            if self.replicas.without_replica(slot) {
                return Ok(());
            }
        }
        let mut wait = redis::cmd("WAIT");
        wait.arg(1).arg(REPLICA_ACK.as_millis() as u64);
        let primary = Route::with_key(full_key, SlotAddr::Master);
        let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(primary));
        let acked = conn
            .clone()
            .route_command(wait, routing)
            .await
            .map_err(unavailable)?;
        if acked == Value::Int(0) && self.replicas.stale() {
            self.read_replicas(conn).await;
        }
        Ok(())
    }

    /// Reads which primaries have a connected replica (`CLUSTER NODES`,
    /// one node's view); a failed read keeps the last one.
    async fn read_replicas(&self, conn: &ClusterConnection) {
        let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random);
        let answer = conn
            .clone()
            .route_command(redis::cmd("CLUSTER").arg("NODES").clone(), routing)
            .await;
        match answer.and_then(|v| redis::from_redis_value::<String>(v).map_err(Into::into)) {
            Ok(text) => self.replicas.record(parse(&text)),
            Err(e) => tracing::warn!(error = %e, "the cluster's replicas could not be read"),
        }
    }

    /// Primaries of the cluster without a connected replica, as last read
    /// (0 on one server, or before any write missed its replica).
    pub fn primaries_without_replica(&self) -> usize {
        self.replicas.lacking()
    }
}
