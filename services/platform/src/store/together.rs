//! Operations that go to the store together: one round trip on Redis
//! where the order they run in still holds (`redis_backend/pipelined.rs`),
//! rather than one round trip each.

use super::{Store, StoreError, Versioned, decoded};
use crate::telemetry::metrics::time_store;

impl Store {
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
