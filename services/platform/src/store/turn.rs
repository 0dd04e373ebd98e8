//! Turns: this process's writers of one key queue for it instead of
//! racing (see [`super::Store::read_held`]), and the writer whose turn it
//! is starts from what the last one wrote, kept in the turn: a key this
//! process writes is then written with one compare-and-set, without
//! reading or decoding it first. The compare-and-set still decides: a value written
//! meanwhile by another replica fails it, and the writer reads and
//! retries as without a turn.

use std::any::Any;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedMutexGuard;

use super::Versioned;

/// Where the values written last are kept for the next writer: a fixed
/// number of places by key hash, whatever the keys (never a map keyed by
/// client input); a key whose place another key took is read again.
const KEPT: usize = 1024;

/// The locks' maps, by key hash.
const SHARDS: usize = 64;

/// Bytes (encoded) the turns keep at once, over all of them: a write that
/// would go over is not kept, and its key's next writer reads it.
pub const KEPT_BYTES: usize = 16 * 1024 * 1024;

/// The value the last holder wrote, decoded, for the next holder: key,
/// version, value and its encoded size.
type Last = (String, u64, Box<dyn Any + Send>, usize);

type Lock = Arc<tokio::sync::Mutex<()>>;
type Locks = Mutex<HashMap<Arc<str>, Lock>>;

pub struct Turns {
    /// One lock per key: a key's writers queue on it, other keys' never
    /// do. Locks were once shared by hash like the values kept, and two
    /// busy carts that shared one queued their writers together, each
    /// write then reading its cart again (the other had taken the kept
    /// place): a quarter of a second a write. A key's entry goes when its
    /// last holder or waiter leaves, so the maps hold only the keys of
    /// writes in flight.
    locks: Box<[Locks]>,
    /// The key, version and value the last holder wrote, handed to the
    /// next holder of the key: one value a place, [`KEPT_BYTES`] in all.
    kept_values: Box<[Mutex<Option<Last>>]>,
    kept: AtomicUsize,
}

impl Default for Turns {
    fn default() -> Self {
        Self {
            locks: (0..SHARDS).map(|_| Locks::default()).collect(),
            kept_values: (0..KEPT).map(|_| Mutex::default()).collect(),
            kept: AtomicUsize::new(0),
        }
    }
}

fn hash(key: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0).hash_one(key)
}

impl Turns {
    pub async fn take(&self, key: &str) -> Turn<'_> {
        let hash = hash(key);
        let shard = &self.locks[(hash % SHARDS as u64) as usize];
        let entry = {
            let mut locks = shard.lock().unwrap_or_else(PoisonError::into_inner);
            let (key, lock) = match locks.get_key_value(key) {
                Some((key, lock)) => (key.clone(), lock.clone()),
                None => {
                    let (key, lock): (Arc<str>, Lock) = (key.into(), Lock::default());
                    locks.insert(key.clone(), lock.clone());
                    (key, lock)
                }
            };
            Entry { shard, key, lock }
        };
        // A waiter dropped here (its request cancelled) still leaves the
        // map as it found it: `entry` goes with it.
        let held = entry.lock.clone().lock_owned().await;
        Turn {
            _held: held,
            _entry: entry,
            kept_value: &self.kept_values[(hash % KEPT as u64) as usize],
            kept: &self.kept,
        }
    }

    /// Bytes kept now (encoded).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.kept.load(Ordering::Relaxed)
    }

    /// Keys with a lock now.
    #[cfg(test)]
    fn locked_keys(&self) -> usize {
        self.locks.iter().map(|s| s.lock().unwrap().len()).sum()
    }
}

/// A key's place in its lock map, for as long as a writer holds or waits
/// for the key's lock.
struct Entry<'a> {
    shard: &'a Locks,
    key: Arc<str>,
    lock: Lock,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        let mut locks = self.shard.lock().unwrap_or_else(PoisonError::into_inner);
        // The lock is cloned only under the map's lock: the map's and this
        // one are all that are left when no other writer holds or waits.
        if Arc::strong_count(&self.lock) == 2 {
            locks.remove(&self.key);
        }
    }
}

/// One writer's turn at a key; the next writer waits until it is dropped.
pub struct Turn<'a> {
    // Fields drop in order: the lock is released before its entry goes.
    _held: OwnedMutexGuard<()>,
    _entry: Entry<'a>,
    kept_value: &'a Mutex<Option<Last>>,
    kept: &'a AtomicUsize,
}

impl Turn<'_> {
    /// What the last writer of `key` wrote, if it is still kept (places
    /// are shared by hash: another key's value stays) and it is a `T`;
    /// taken, not copied.
    pub fn take_last<T: 'static>(&mut self, key: &str) -> Option<Versioned<T>> {
        let last = {
            let mut place = self
                .kept_value
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if place.as_ref().is_none_or(|last| last.0 != key) {
                return None;
            }
            place.take()?
        };
        self.kept.fetch_sub(last.3, Ordering::Relaxed);
        let (_, version, value, _) = last;
        let value = *value.downcast::<T>().ok()?;
        Some(Versioned { version, value })
    }

    /// Records what this writer wrote (`bytes` encoded), for the next
    /// writer of `key`, in place of what the key's place held, unless the
    /// turns hold their budget already.
    pub fn wrote<T: Send + 'static>(&mut self, key: &str, version: u64, value: T, bytes: usize) {
        let mut place = self
            .kept_value
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(replaced) = place.take() {
            self.kept.fetch_sub(replaced.3, Ordering::Relaxed);
        }
        let fits = self
            .kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                (kept + bytes <= KEPT_BYTES).then_some(kept + bytes)
            })
            .is_ok();
        if fits {
            *place = Some((key.to_string(), version, Box::new(value), bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;

    use super::*;

    /// Two keys whose values are kept in one place (by hash).
    fn sharing_a_place() -> (String, String) {
        let place = |k: &str| hash(k) % KEPT as u64;
        let first = "cart:a".to_string();
        let second = (0..)
            .map(|n| format!("cart:{n}"))
            .find(|k| place(k) == place(&first))
            .expect("a key in the same place");
        (first, second)
    }

    #[tokio::test]
    async fn keys_that_share_a_place_do_not_wait_for_each_other() {
        let turns = Turns::default();
        let (a, b) = sharing_a_place();
        let mut held = turns.take(&a).await;
        held.wrote(&a, 3, "three".to_string(), 5);
        let mut other = turns
            .take(&b)
            .now_or_never()
            .expect("another key's turn is free at once");
        assert!(
            turns.take(&a).now_or_never().is_none(),
            "the same key waits"
        );
        other.wrote(&b, 1, "one".to_string(), 3);
        drop((other, held));
        let mut next = turns.take(&a).await;
        assert_eq!(
            next.take_last::<String>(&a),
            None,
            "b's value took the place"
        );
        drop(next);
        assert_eq!(
            turns.kept(),
            3,
            "a's bytes given back when b's replaced them"
        );
        assert_eq!(
            turns.locked_keys(),
            0,
            "no lock left once none holds or waits"
        );
    }

    #[tokio::test]
    async fn a_cancelled_waiter_leaves_no_lock_behind() {
        let turns = Turns::default();
        let held = turns.take("k").await;
        assert!(
            turns.take("k").now_or_never().is_none(),
            "waits, then is dropped"
        );
        assert_eq!(turns.locked_keys(), 1);
        drop(held);
        assert_eq!(turns.locked_keys(), 0);
        assert!(turns.take("k").now_or_never().is_some(), "the key is free");
        // A waiter handed the lock, then dropped before it ran: the last.
        let held = turns.take("k").await;
        let mut waiter = Box::pin(turns.take("k"));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(waiter.as_mut().poll(&mut cx).is_pending());
        drop(held);
        drop(waiter);
        assert_eq!(
            turns.locked_keys(),
            0,
            "the last waiter took its entry away"
        );
    }

    #[tokio::test]
    async fn the_last_write_is_handed_to_the_next_writer_of_its_key() {
        let turns = std::sync::Arc::new(Turns::default());
        let mut first = turns.take("k").await;
        let waiter = tokio::spawn({
            let turns = turns.clone();
            async move {
                let mut turn = turns.take("k").await;
                let got = turn.take_last::<String>("k").map(|v| (v.version, v.value));
                turn.wrote("k", 8, "eight".to_string(), 5);
                got
            }
        });
        tokio::task::yield_now().await;
        first.wrote("k", 7, "seven".to_string(), 5);
        assert_eq!(
            first.take_last::<String>("other"),
            None,
            "another key sharing the turn"
        );
        drop(first);
        assert_eq!(waiter.await.unwrap(), Some((7, "seven".into())));
        // Kept with nobody waiting, for the key's next writer; taken once.
        let mut later = turns.take("k").await;
        assert_eq!(later.take_last::<u32>("k"), None, "another type");
        drop(later);
        let mut later = turns.take("k").await;
        assert_eq!(
            later.take_last::<String>("k"),
            None,
            "taken by the wrong type"
        );
        later.wrote("k", 9, "nine".to_string(), 4);
        drop(later);
        let mut later = turns.take("k").await;
        assert_eq!(later.take_last::<String>("k").map(|v| v.version), Some(9));
        assert_eq!(later.take_last::<String>("k"), None, "taken, not copied");
    }

    #[tokio::test]
    async fn the_turns_keep_no_more_than_their_budget() {
        let turns = Turns::default();
        let big = KEPT_BYTES / 3 + 1;
        for n in 0..8 {
            let key = format!("key-{n}");
            turns.take(&key).await.wrote(&key, 1, vec![0u8; 8], big);
            assert!(turns.kept() <= KEPT_BYTES, "{}", turns.kept());
        }
        assert_eq!(turns.kept(), 2 * big, "two fit, the rest were not kept");
        let mut found = 0;
        for n in 0..8 {
            let key = format!("key-{n}");
            found += usize::from(turns.take(&key).await.take_last::<Vec<u8>>(&key).is_some());
        }
        assert_eq!(found, 2);
        assert_eq!(turns.kept(), 0, "a value taken gives its bytes back");
    }
}
