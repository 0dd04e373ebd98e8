//! Operations that go to the store together: one round trip on Redis
//! where the order they run in still holds (`redis_backend/pipelined.rs`),
//! rather than one round trip each.

use super::{Store, StoreError, Versioned, decoded};
use crate::telemetry::metrics::time_store;

/// What a value is written with, all or none: entries appended to a
/// stream and members raised in sorted sets.
pub struct Published<'a> {
    pub stream: &'a str,
    /// Each entry's fields.
    pub entries: &'a [Vec<(&'a str, &'a [u8])>],
    /// About how many entries the stream keeps.
    pub max_len: usize,
    /// (sorted set, member, score): raised there, never lowered.
    pub raised: &'a [(&'a str, &'a str, i64)],
}

impl Store {
    /// Creates `key` at version 1 unless it exists, and only then appends
    /// and raises what `published` names, as one write: true when created.
    /// None where the store cannot make them one write (a Redis Cluster,
    /// whose keys lie in different slots): the caller writes them apart.
    pub async fn insert_published(
        &self,
        key: &str,
        value: &[u8],
        published: &Published<'_>,
    ) -> Result<Option<bool>, StoreError> {
        match self {
            Store::Memory(m) => {
                // One process: nothing to lose between the writes.
                if !m.insert(key, value, None) {
                    return Ok(Some(false));
                }
                self.stream_add_all(published.stream, published.entries, published.max_len)
                    .await?;
                for (set, member, score) in published.raised {
                    self.zset_raise(set, member, *score).await?;
                }
                Ok(Some(true))
            }
            Store::Redis(r) => {
                time_store(
                    "insert_published",
                    r.insert_published(key, value, published),
                )
                .await
            }
        }
    }

    /// Appends `entries` to `stream` in their order (as many `stream_add`s,
    /// in one round trip); their ids, in order.
    pub async fn stream_add_all(
        &self,
        stream: &str,
        entries: &[Vec<(&str, &[u8])>],
        max_len: usize,
    ) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Memory(m) => Ok(entries
                .iter()
                .map(|fields| m.events().add(stream, fields, max_len))
                .collect()),
            Store::Redis(r) => {
                time_store("stream_add_all", r.stream_add_all(stream, entries, max_len)).await
            }
        }
    }

    /// Takes `member` out of the set `set`, then reads the message at `key`
    /// as it is after that (one round trip on one Redis server).
    pub async fn set_remove_then_get_message<T: prost::Message + Default>(
        &self,
        set: &str,
        member: &str,
        key: &str,
    ) -> Result<Option<Versioned<T>>, StoreError> {
        let found = match self {
            Store::Memory(m) => {
                self.set_remove(set, member).await?;
                m.get(key)
            }
            Store::Redis(r) => {
                let read = r.set_remove_then_get(set, member, key);
                time_store("set_remove_then_get", read).await?
            }
        };
        decoded(key, found)
    }
}

#[cfg(test)]
#[path = "together_tests.rs"]
mod tests;
