//! Read-modify-write: a change applied to the latest value and written
//! back by compare-and-set, retried on conflict; on Redis in this
//! process's turn at the key (see [`Turn`]).

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::turn::Turn;
use super::{Store, StoreError, Versioned, decode_message, encode};
use crate::telemetry::metrics::time_store;

/// The outcome of [`Store::update_json`].
#[derive(Debug)]
pub enum Updated<R, T> {
    /// No value at the key.
    Missing,
    /// Every attempt lost its compare-and-set to another writer.
    Contended,
    Done {
        result: R,
        value: T,
        version: u64,
    },
}

/// What a successful update gives back, and what it leaves in the turn
/// for the key's next writer.
trait Give<T> {
    type Out;
    fn give(value: T, bytes: Vec<u8>, turn: Option<Turn<'_>>, key: &str, version: u64)
    -> Self::Out;
}

/// The value; a copy of it stays in the turn.
struct GiveValue;

/// The value's encoding, as stored; the value itself moves into the turn.
struct GiveEncoded;

impl<T: Clone + Send + 'static> Give<T> for GiveValue {
    type Out = T;
    fn give(value: T, bytes: Vec<u8>, turn: Option<Turn<'_>>, key: &str, version: u64) -> T {
        if let Some(mut turn) = turn {
            turn.wrote(key, version, value.clone(), bytes.len());
        }
        value
    }
}

impl<T: Send + 'static> Give<T> for GiveEncoded {
    type Out = Vec<u8>;
    fn give(value: T, bytes: Vec<u8>, turn: Option<Turn<'_>>, key: &str, version: u64) -> Vec<u8> {
        if let Some(mut turn) = turn {
            turn.wrote(key, version, value, bytes.len());
        }
        bytes
    }
}

/// A value read in the writer's turn at its key (Redis), to be written
/// back by one compare-and-set when nothing changed it since
/// ([`Store::update_message_from`]). The turn is held until then.
pub struct Held<'s, T> {
    turn: Option<Turn<'s>>,
    pub value: Versioned<T>,
}

impl<T> Held<'_, T> {
    /// What this process itself wrote or read at `value.version`, as the
    /// seed of its next update, outside the key's turn (none is held for
    /// the work between; the update takes it): when nothing wrote the key
    /// since, the update is one compare-and-set, without reading it again;
    /// otherwise it reads.
    pub fn known(value: Versioned<T>) -> Self {
        Self { turn: None, value }
    }
}

impl Store {
    /// Read-modify-write made race-free: applies `change` to the latest
    /// value and writes it back by compare-and-set, retrying on conflict up
    /// to `attempts` times. `change` may refuse with an error, which is
    /// returned as is.
    pub async fn update_json<T, R, E>(
        &self,
        key: &str,
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, T>, E>
    where
        T: Serialize + DeserializeOwned + Clone + Send + 'static,
        E: From<StoreError>,
    {
        let decode = |key: &str, bytes: &[u8]| {
            serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(format!("{key}: {e}")))
        };
        self.update_with::<_, _, _, _, _, GiveValue>(
            key,
            (None, None),
            attempts,
            ttl,
            (decode, encode),
            change,
        )
        .await
    }

    /// [`Store::update_json`] for protobuf messages.
    pub async fn update_message<T, R, E>(
        &self,
        key: &str,
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, T>, E>
    where
        T: prost::Message + Default + Clone + Send + 'static,
        E: From<StoreError>,
    {
        self.update_message_from(key, None, attempts, ttl, change)
            .await
    }

    /// This process's turn to read-modify-write `key` (Redis; in memory a
    /// compare-and-set retry costs no round trip, so none is needed).
    async fn turn(&self, key: &str) -> Option<Turn<'_>> {
        match self {
            // Boxed, as `time_store` boxes commands: not inline in every
            // update's future.
            Store::Redis(r) => Some(Box::pin(r.turn(key)).await),
            Store::Memory(_) => None,
        }
    }

    /// The message at `key`, read in this process's turn at it, for a
    /// change decided from it (`update_message_from`): the turn is taken
    /// before the read, so this process's other writers of the key queue
    /// rather than fail their compare-and-set, and each starts from the
    /// value the key's last writer here wrote (kept in the turn), without
    /// a read.
    pub async fn read_held<T: prost::Message + Default + 'static>(
        &self,
        key: &str,
    ) -> Result<Option<Held<'_, T>>, StoreError> {
        let mut turn = self.turn(key).await;
        if let Some(value) = turn.as_mut().and_then(|t| t.take_last::<T>(key)) {
            return Ok(Some(Held { turn, value }));
        }
        let Some(found) = self.get(key).await? else {
            return Ok(None);
        };
        let value = Versioned {
            version: found.version,
            value: decode_message(key, &found.value)?,
        };
        Ok(Some(Held { turn, value }))
    }

    /// As [`Store::update_message`], starting from `seed` (read by
    /// [`Store::read_held`]): when nothing wrote the key since, the update
    /// is one compare-and-set, without reading it again.
    pub async fn update_message_from<T, R, E>(
        &self,
        key: &str,
        seed: Option<Held<'_, T>>,
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, T>, E>
    where
        T: prost::Message + Default + Clone + Send + 'static,
        E: From<StoreError>,
    {
        self.message_update::<_, _, _, GiveValue>(key, (seed, None), attempts, ttl, change)
            .await
    }

    /// As [`Store::update_message_from`] from a value known at
    /// `changed.version` (as [`Held::known`]) that the caller has already
    /// changed by `change`, which gave `result`: when nothing wrote the key
    /// since, `changed.value` is written as it is, without `change` run on
    /// a copy of the value first (the caller needs no copy to see whether
    /// its change changes anything); otherwise `change` runs on the newer
    /// value, as in any update.
    pub async fn update_message_changed<T, R, E>(
        &self,
        key: &str,
        (changed, result): (Versioned<T>, R),
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, T>, E>
    where
        T: prost::Message + Default + Clone + Send + 'static,
        E: From<StoreError>,
    {
        let seed = Some(Held::known(changed));
        self.message_update::<_, _, _, GiveValue>(key, (seed, Some(result)), attempts, ttl, change)
            .await
    }

    /// As [`Store::update_message_from`], giving back the value written
    /// encoded, as stored (and as a reply carries it), rather than the
    /// value: the value moves into the turn for the key's next writer,
    /// without a copy.
    pub async fn update_message_encoded_from<T, R, E>(
        &self,
        key: &str,
        seed: Option<Held<'_, T>>,
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, Vec<u8>>, E>
    where
        T: prost::Message + Default + Clone + Send + 'static,
        E: From<StoreError>,
    {
        self.message_update::<_, _, _, GiveEncoded>(key, (seed, None), attempts, ttl, change)
            .await
    }

    /// A protobuf message's update, giving back what `G` gives.
    async fn message_update<T, R, E, G>(
        &self,
        key: &str,
        seed: (Option<Held<'_, T>>, Option<R>),
        attempts: usize,
        ttl: Option<Duration>,
        change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, G::Out>, E>
    where
        T: prost::Message + Default + Send + 'static,
        E: From<StoreError>,
        G: Give<T>,
    {
        let encode = |value: &T| Ok(value.encode_to_vec());
        self.update_with::<_, _, _, _, _, G>(
            key,
            seed,
            attempts,
            ttl,
            (decode_message, encode),
            change,
        )
        .await
    }

    /// The loop of every update: `codec` reads and writes the stored form;
    /// `G` says what is given back.
    /// `seed`: the value to start from, if known, and the change's result
    /// when that value is already changed (`update_message_changed`).
    async fn update_with<T, R, E, D, En, G>(
        &self,
        key: &str,
        (seed, mut given): (Option<Held<'_, T>>, Option<R>),
        attempts: usize,
        ttl: Option<Duration>,
        (decode, encode): (D, En),
        mut change: impl FnMut(&mut T) -> Result<R, E>,
    ) -> Result<Updated<R, G::Out>, E>
    where
        G: Give<T>,
        T: Send + 'static,
        E: From<StoreError>,
        D: Fn(&str, &[u8]) -> Result<T, StoreError>,
        En: Fn(&T) -> Result<Vec<u8>, StoreError>,
    {
        let (mut turn, mut seed) = match seed {
            Some(Held {
                turn: Some(turn),
                value,
            }) => (Some(turn), Some(value)),
            // Known from before: the turn is taken now, so that what is
            // written here is what the key's next writer in this process
            // starts from; a newer value the turn holds is the seed.
            Some(Held { turn: None, value }) => {
                let mut turn = self.turn(key).await;
                let last = turn.as_mut().and_then(|t| t.take_last::<T>(key));
                match last.filter(|l| l.version > value.version) {
                    // The change was made to an older value: made again.
                    Some(newer) => {
                        given = None;
                        (turn, Some(newer))
                    }
                    None => (turn, Some(value)),
                }
            }
            None => {
                given = None;
                (self.turn(key).await, None)
            }
        };
        for attempt in 0..attempts {
            let last = || turn.as_mut().and_then(|t| t.take_last::<T>(key));
            let (version, mut value) = match seed.take().or_else(last) {
                Some(seed) => (seed.version, seed.value),
                None => {
                    let Some(found) = self.get(key).await? else {
                        return Ok(Updated::Missing);
                    };
                    (found.version, decode(key, &found.value)?)
                }
            };
            // Only the seed comes changed, and it is the first attempt's.
            let result = match given.take() {
                Some(result) => result,
                None => change(&mut value)?,
            };
            let bytes = encode(&value)?;
            if let Some(version) = self.replace_unacked(key, version, &bytes, ttl).await? {
                let value = G::give(value, bytes, turn.take(), key, version);
                // The turn is free: the next writer builds on this write
                // while this one waits for a replica to hold it.
                self.acked(key).await?;
                return Ok(Updated::Done {
                    result,
                    value,
                    version,
                });
            }
            // Let the writer that won finish before reading again.
            if attempt > 2 {
                tokio::time::sleep(Duration::from_micros(100 * attempt as u64)).await;
            } else {
                tokio::task::yield_now().await;
            }
        }
        Ok(Updated::Contended)
    }
}

impl Store {
    /// A compare-and-set that does not wait for a replica (see
    /// [`Store::acked`]).
    async fn replace_unacked(
        &self,
        key: &str,
        expected: u64,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<Option<u64>, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.replace(key, expected, value, ttl)),
            Store::Redis(r) => {
                time_store("replace", r.replace_unacked(key, expected, value, ttl)).await
            }
        }
    }

    /// On a Redis Cluster, waits until a replica holds what was written to
    /// `key`: a write is acknowledged to a client only then.
    async fn acked(&self, key: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(_) => Ok(()),
            Store::Redis(r) => Box::pin(r.acked(key)).await,
        }
    }
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
