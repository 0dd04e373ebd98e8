//! The shared way to keep state: a keyed store of versioned values with two
//! backends behind one type, in-memory (the default) and Redis
//! (`REDIS_URL`). Every write that must be atomic is one operation here
//! (compare-and-set on the version, create-if-absent, create-with-unique-
//! index), implemented with a mutex in memory and a Lua script in Redis, so
//! the services on top are race-free on both.

mod events;
mod memory;
mod moved;
mod redis_backend;
mod replicas;
mod stream_range;
mod target;
mod together;
mod turn;
mod update;

pub use events::StreamEntry;
pub use redis_backend::{GcraOutcome, RedisStore};
pub use stream_range::is_position;
pub use target::RedisTarget;
pub use together::Published;
pub use turn::Turn;
pub use update::{Held, Updated};

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ErrorKind, ServiceError};
use crate::telemetry::metrics::time_store;

/// A stored value and its version (1 on creation, +1 per replace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned<T> {
    pub version: u64,
    pub value: T,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("store unavailable: {0}")]
    Unavailable(String),
    #[error("stored value is corrupt: {0}")]
    Corrupt(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "store error");
        match e {
            StoreError::Unavailable(_) => ServiceError::new(
                ErrorKind::Unavailable,
                "STORE_UNAVAILABLE",
                "storage is temporarily unavailable",
            ),
            StoreError::Corrupt(_) => ServiceError::internal("stored data could not be read"),
        }
    }
}

#[derive(Clone)]
pub enum Store {
    Memory(memory::MemoryStore),
    Redis(RedisStore),
}

impl Store {
    pub fn memory() -> Self {
        Store::Memory(memory::MemoryStore::default())
    }

    /// Connects to the Redis server at `url` (or the cluster at the node
    /// URLs it lists); keys are prefixed with `prefix`.
    pub async fn redis(url: &str, prefix: &str) -> Result<Self, StoreError> {
        Self::connect(&RedisTarget::new(url), prefix).await
    }

    /// Connects to the Redis `target`; keys are prefixed with `prefix`.
    pub async fn connect(target: &RedisTarget, prefix: &str) -> Result<Self, StoreError> {
        Ok(Store::Redis(
            redis_backend::RedisStore::connect(target, prefix).await?,
        ))
    }

    /// Redis when a `target` is given, otherwise a new in-memory store.
    pub async fn open(target: Option<&RedisTarget>, prefix: &str) -> Result<Self, StoreError> {
        match target {
            Some(target) => Self::connect(target, prefix).await,
            None => Ok(Self::memory()),
        }
    }

    /// Primaries of a Redis Cluster without a connected replica, as last
    /// read: writes to them are not waited for (0 otherwise).
    pub fn primaries_without_replica(&self) -> usize {
        match self {
            Store::Redis(r) => r.primaries_without_replica(),
            Store::Memory(_) => 0,
        }
    }

    /// Why this process refuses to serve on its Redis, when it does: the
    /// file its address came from now names another server (`moved`).
    pub fn refusal(&self) -> Option<String> {
        match self {
            Store::Memory(_) => None,
            Store::Redis(r) => r.retired.borrow().clone(),
        }
    }

    /// The refusal as it changes (never, in memory).
    pub fn refusals(&self) -> tokio::sync::watch::Receiver<Option<String>> {
        match self {
            Store::Memory(_) => tokio::sync::watch::Sender::new(None).subscribe(),
            Store::Redis(r) => r.retired.subscribe(),
        }
    }

    pub fn backend(&self) -> &'static str {
        match self {
            Store::Memory(_) => "memory",
            Store::Redis(r) => r.kind(),
        }
    }

    pub async fn get(&self, key: &str) -> Result<Option<Versioned<Vec<u8>>>, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.get(key)),
            Store::Redis(r) => time_store("get", r.get(key)).await,
        }
    }

    /// Creates `key` at version 1 unless it exists. True when created.
    pub async fn insert(
        &self,
        key: &str,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<bool, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.insert(key, value, ttl)),
            Store::Redis(r) => time_store("insert", r.insert(key, value, ttl)).await,
        }
    }

    /// Creates `key` and the unique index entry `index -> index_value`
    /// together, unless either exists. True when created.
    pub async fn insert_indexed(
        &self,
        key: &str,
        value: &[u8],
        index: &str,
        index_value: &[u8],
    ) -> Result<bool, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.insert_indexed(key, value, index, index_value)),
            Store::Redis(r) => {
                time_store(
                    "insert_indexed",
                    r.insert_indexed(key, value, index, index_value),
                )
                .await
            }
        }
    }

    /// Replaces `key` if it is still at `expected`; the new version, or None
    /// when it moved on (or is gone). `ttl` None keeps the current expiry.
    pub async fn replace(
        &self,
        key: &str,
        expected: u64,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<Option<u64>, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.replace(key, expected, value, ttl)),
            Store::Redis(r) => time_store("replace", r.replace(key, expected, value, ttl)).await,
        }
    }

    pub async fn delete(&self, key: &str) -> Result<bool, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.delete(key)),
            Store::Redis(r) => time_store("delete", r.delete(key)).await,
        }
    }

    /// Whether any of `keys` exists: one round trip.
    pub async fn exists_any(&self, keys: &[&str]) -> Result<bool, StoreError> {
        match self {
            Store::Memory(m) => Ok(keys.iter().any(|k| m.get(k).is_some())),
            Store::Redis(r) => time_store("exists_any", r.exists_any(keys)).await,
        }
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
            Store::Redis(r) => time_store("ping", r.ping()).await,
        }
    }

    pub async fn get_json<T: DeserializeOwned>(
        &self,
        key: &str,
    ) -> Result<Option<Versioned<T>>, StoreError> {
        let Some(found) = self.get(key).await? else {
            return Ok(None);
        };
        let value = serde_json::from_slice(&found.value)
            .map_err(|e| StoreError::Corrupt(format!("{key}: {e}")))?;
        Ok(Some(Versioned {
            version: found.version,
            value,
        }))
    }

    pub async fn insert_json<T: Serialize>(
        &self,
        key: &str,
        value: &T,
        ttl: Option<Duration>,
    ) -> Result<bool, StoreError> {
        self.insert(key, &encode(value)?, ttl).await
    }

    pub async fn replace_json<T: Serialize>(
        &self,
        key: &str,
        expected: u64,
        value: &T,
        ttl: Option<Duration>,
    ) -> Result<Option<u64>, StoreError> {
        self.replace(key, expected, &encode(value)?, ttl).await
    }
}

impl Store {
    pub async fn get_message<T: prost::Message + Default>(
        &self,
        key: &str,
    ) -> Result<Option<Versioned<T>>, StoreError> {
        decoded(key, self.get(key).await?)
    }

    pub async fn insert_message<T: prost::Message>(
        &self,
        key: &str,
        value: &T,
        ttl: Option<Duration>,
    ) -> Result<bool, StoreError> {
        self.insert(key, &value.encode_to_vec(), ttl).await
    }
}

/// The message a value read at `key` holds, at its version.
pub(super) fn decoded<T: prost::Message + Default>(
    key: &str,
    found: Option<Versioned<Vec<u8>>>,
) -> Result<Option<Versioned<T>>, StoreError> {
    let Some(found) = found else {
        return Ok(None);
    };
    Ok(Some(Versioned {
        version: found.version,
        value: decode_message(key, &found.value)?,
    }))
}

pub(super) fn decode_message<T: prost::Message + Default>(
    key: &str,
    bytes: &[u8],
) -> Result<T, StoreError> {
    T::decode(bytes).map_err(|e| StoreError::Corrupt(format!("{key}: {e}")))
}

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

#[cfg(test)]
mod tests;
