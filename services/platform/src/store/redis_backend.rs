//! The Redis backend: a value is a hash `{v: version, d: data}`; every
//! conditional write is one Lua script, so it is atomic across replicas.
//! One server (`redis://host:port`) or a Redis Cluster (several node
//! addresses, comma-separated): on a cluster every command and script
//! names one key, so nothing crosses a hash slot.

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::io::tcp::TcpSettings;
use redis::{AsyncCommands, Cmd, Pipeline, RedisFuture, Script, Value};

use super::replicas::ReplicaHealth;
use super::turn::{Turn, Turns};
use super::{RedisTarget, StoreError, Versioned};

mod acks;
mod gcra;
mod pipelined;
mod replication;
#[cfg(test)]
mod tcp_tests;
use acks::Acks;
use gcra::GCRA;
pub use gcra::GcraOutcome;

/// KEYS[1] value; ARGV[1] data, ARGV[2] ttl ms (0 = none).
const INSERT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1";

/// KEYS[1] value, KEYS[2] index; ARGV[1] data, ARGV[2] index data.
const INSERT_INDEXED: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
redis.call('HSET', KEYS[2], 'v', 1, 'd', ARGV[2])
return 1";

/// KEYS[1] value; ARGV[1] expected version, ARGV[2] data, ARGV[3] ttl ms.
const REPLACE: &str = r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v or v ~= ARGV[1] then return -1 end
local next = tonumber(v) + 1
redis.call('HSET', KEYS[1], 'v', next, 'd', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return next";

struct Scripts {
    gcra: Script,
    insert: Script,
    insert_indexed: Script,
    replace: Script,
}

/// A connection to one server, or to a cluster (which routes each
/// command to the node holding its key's slot, and follows failovers).
#[derive(Clone)]
enum Conn {
    Server(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Server(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Server(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Server(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

#[derive(Clone)]
pub struct RedisStore {
    conn: Conn,
    prefix: Arc<str>,
    scripts: Arc<Scripts>,
    /// Read-modify-write turns, by key hash (see [`RedisStore::turn`]).
    turns: Arc<Turns>,
    /// Which cluster shards have a replica to wait for (`replicas`).
    replicas: Arc<ReplicaHealth>,
    /// On a cluster, where writes wait for a replica (`acks`).
    acks: Option<Arc<Acks>>,
    /// Why this process no longer serves on this Redis (`moved`).
    pub(super) retired: Arc<tokio::sync::watch::Sender<Option<String>>>,
}

fn unavailable(e: redis::RedisError) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// Every connection to Redis sends each command as soon as it is written
/// (`TCP_NODELAY`; the client's default is off). One connection carries
/// every call of the process, so with Nagle's algorithm a command waited
/// for the acknowledgement of the bytes before it, which the server may
/// hold back for a delayed ACK (40-200 ms on Linux) when it has no reply
/// to carry it on yet.
fn tcp_settings() -> TcpSettings {
    TcpSettings::default().set_nodelay(true)
}

fn ttl_ms(ttl: Option<Duration>) -> u64 {
    ttl.map_or(0, |t| t.as_millis().max(1) as u64)
}

impl RedisStore {
    /// One server, or a cluster; over TLS for `rediss://`, trusting the
    /// target's CA certificates when it names some.
    pub async fn connect(target: &RedisTarget, prefix: &str) -> Result<Self, StoreError> {
        let certs = target.ca_pem.as_ref().map(|pem| redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(pem.clone()),
        });
        let prefix: Arc<str> = prefix.into();
        let mut acks = None;
        let replicas = Arc::new(ReplicaHealth::default());
        let conn = if target.is_cluster() {
            let mut builder = ClusterClient::builder(target.nodes())
                .connection_timeout(Duration::from_secs(2))
                .response_timeout(Duration::from_secs(2))
                .retries(4)
                .tcp_settings(tcp_settings());
            if let Some(certs) = certs {
                builder = builder.certs(certs);
            }
            let client = builder.build().map_err(unavailable)?;
            let lanes = (0..acks::LANES).map(|_| client.get_async_connection());
            let lanes = futures::future::try_join_all(lanes)
                .await
                .map_err(unavailable)?;
            let replicas = Arc::clone(&replicas);
            acks = Some(Arc::new(Acks::new(lanes, prefix.clone(), replicas)));
            Conn::Cluster(client.get_async_connection().await.map_err(unavailable)?)
        } else {
            let url = redis::IntoConnectionInfo::into_connection_info(target.url.as_str())
                .map_err(unavailable)?
                .set_tcp_settings(tcp_settings());
            let client = match certs {
                Some(certs) => redis::Client::build_with_tls(url, certs),
                None => redis::Client::open(url),
            }
            .map_err(unavailable)?;
            let config = redis::aio::ConnectionManagerConfig::new()
                .set_connection_timeout(Some(Duration::from_secs(2)))
                .set_response_timeout(Some(Duration::from_secs(2)))
                .set_number_of_retries(2);
            Conn::Server(
                client
                    .get_connection_manager_with_config(config)
                    .await
                    .map_err(unavailable)?,
            )
        };
        let scripts = Scripts {
            gcra: Script::new(GCRA),
            insert: Script::new(INSERT),
            insert_indexed: Script::new(INSERT_INDEXED),
            replace: Script::new(REPLACE),
        };
        let retired = Arc::new(tokio::sync::watch::Sender::new(None));
        if let Some(source) = &target.source {
            super::moved::follow(target.endpoint(), source.clone(), &retired);
        }
        Ok(Self {
            conn,
            prefix,
            scripts: Arc::new(scripts),
            turns: Arc::new(Turns::default()),
            replicas,
            acks,
            retired,
        })
    }

    /// This process's turn to read-modify-write `key`. Writers of one key
    /// in one replica queue here instead of racing: a hot key's
    /// compare-and-set then fails only against other replicas, rather
    /// than every concurrent writer retrying (two round trips a retry)
    /// until some run out of attempts.
    pub async fn turn(&self, key: &str) -> Turn<'_> {
        self.turns.take(key).await
    }

    /// One server or a cluster.
    pub fn kind(&self) -> &'static str {
        match self.conn {
            Conn::Server(_) => "redis",
            Conn::Cluster(_) => "redis cluster",
        }
    }

    /// `key` with this store's prefix.
    pub(super) fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    pub async fn get(&self, key: &str) -> Result<Option<Versioned<Vec<u8>>>, StoreError> {
        self.get_full(&self.key(key)).await
    }

    pub async fn insert(
        &self,
        key: &str,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let full_key = self.key(key);
        let created: i64 = self
            .scripts
            .insert
            .key(&full_key)
            .arg(value)
            .arg(ttl_ms(ttl))
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        if created == 1 {
            self.replicated(&full_key).await?;
        }
        Ok(created == 1)
    }

    pub async fn insert_indexed(
        &self,
        key: &str,
        value: &[u8],
        index: &str,
        index_value: &[u8],
    ) -> Result<bool, StoreError> {
        if let Conn::Cluster(_) = self.conn {
            return self.insert_then_index(key, value, index, index_value).await;
        }
        let mut conn = self.conn.clone();
        let created: i64 = self
            .scripts
            .insert_indexed
            .key(self.key(key))
            .key(self.key(index))
            .arg(value)
            .arg(index_value)
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(created == 1)
    }

    /// `insert_indexed` where the two keys may lie in different slots:
    /// the value first, then the index, so that an index never names a
    /// missing value; a taken index removes the value again. (A crash
    /// between the two leaves a value nothing indexes: unreachable, never
    /// wrong; the value's key is new, e.g. a fresh id.)
    async fn insert_then_index(
        &self,
        key: &str,
        value: &[u8],
        index: &str,
        index_value: &[u8],
    ) -> Result<bool, StoreError> {
        if !self.insert(key, value, None).await? {
            return Ok(false);
        }
        if self.insert(index, index_value, None).await? {
            return Ok(true);
        }
        self.delete(key).await?;
        Ok(false)
    }

    pub async fn replace(
        &self,
        key: &str,
        expected: u64,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<Option<u64>, StoreError> {
        let version = self.replace_unacked(key, expected, value, ttl).await?;
        if version.is_some() {
            self.acked(key).await?;
        }
        Ok(version)
    }

    /// On a cluster, waits until a replica holds the writes made to
    /// `key`'s primary so far (see `replicated`); on one server, nothing.
    pub async fn acked(&self, key: &str) -> Result<(), StoreError> {
        self.replicated(&self.key(key)).await
    }

    /// [`RedisStore::replace`] without waiting for a replica: the caller
    /// waits with [`RedisStore::acked`] before it answers, after letting
    /// the next writer of the key go.
    pub async fn replace_unacked(
        &self,
        key: &str,
        expected: u64,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<Option<u64>, StoreError> {
        let mut conn = self.conn.clone();
        let full_key = self.key(key);
        let version: i64 = self
            .scripts
            .replace
            .key(&full_key)
            .arg(expected)
            .arg(value)
            .arg(ttl_ms(ttl))
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(u64::try_from(version).ok())
    }

    pub async fn delete(&self, key: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let full_key = self.key(key);
        let removed: i64 = conn.del(&full_key).await.map_err(unavailable)?;
        if removed > 0 {
            self.replicated(&full_key).await?;
        }
        Ok(removed > 0)
    }

    pub async fn exists_any(&self, keys: &[&str]) -> Result<bool, StoreError> {
        let keys: Vec<String> = keys.iter().map(|k| self.key(k)).collect();
        if let Conn::Cluster(_) = self.conn {
            // One key per command, all at once: the keys' slots differ.
            let each = keys
                .iter()
                .map(|key| self.count_existing(std::slice::from_ref(key)));
            let counts = futures::future::try_join_all(each).await?;
            return Ok(counts.into_iter().any(|count| count > 0));
        }
        Ok(self.count_existing(&keys).await? > 0)
    }

    async fn count_existing(&self, keys: &[String]) -> Result<i64, StoreError> {
        let mut conn = self.conn.clone();
        redis::cmd("EXISTS")
            .arg(keys)
            .query_async(&mut conn)
            .await
            .map_err(unavailable)
    }

    /// One command on `key` (the key already in it, prefixed); with
    /// `durable`, acknowledged once a replica holds it (on a cluster).
    pub(super) async fn command<T: redis::FromRedisValue>(
        &self,
        cmd: &Cmd,
        key: &str,
        durable: bool,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn.clone();
        let value = cmd.query_async(&mut conn).await.map_err(unavailable)?;
        if durable {
            self.replicated(key).await?;
        }
        Ok(value)
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        if let Some(why) = self.retired.borrow().clone() {
            return Err(StoreError::Unavailable(why));
        }
        let mut conn = self.conn.clone();
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(())
    }
}
