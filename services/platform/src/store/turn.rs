//! Turns: this process's writers of one key queue for it instead of
//! racing (see [`super::Store::read_held`]), and the writer whose turn it
//! is starts from what the last one wrote, kept in the turn: a key this
//! process writes is then written with one compare-and-set, without
//! reading or decoding it first. The compare-and-set still decides: a value written
//! meanwhile by another replica fails it, and the writer reads and
//! retries as without a turn.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard};

use super::Versioned;

/// Turn locks: a fixed number, whatever the keys (never a map keyed by
/// client input); unrelated keys share one only by a hash collision.
const TURNS: usize = 1024;

/// Bytes (encoded) the turns keep at once, over all of them: a write that
/// would go over is not kept, and its key's next writer reads it.
pub const KEPT_BYTES: usize = 16 * 1024 * 1024;

/// The value the last holder wrote, decoded, for the next holder: key,
/// version, value and its encoded size.
type Last = (String, u64, Box<dyn Any + Send>, usize);

#[derive(Default)]
struct Slot {
    /// The key, version and value the last holder wrote, handed to the
    /// next holder of the key: one value a turn, [`KEPT_BYTES`] in all.
    last: Option<Last>,
}

pub struct Turns {
    slots: Box<[Mutex<Slot>]>,
    kept: AtomicUsize,
}

impl Default for Turns {
    fn default() -> Self {
        Self {
            slots: (0..TURNS).map(|_| Mutex::default()).collect(),
            kept: AtomicUsize::new(0),
        }
    }
}

impl Turns {
    pub async fn take(&self, key: &str) -> Turn<'_> {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(key);
        let slot = self.slots[(hash % TURNS as u64) as usize].lock().await;
        Turn {
            slot,
            kept: &self.kept,
        }
    }

    /// Bytes kept now (encoded).
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.kept.load(Ordering::Relaxed)
    }
}

/// One writer's turn at a key; the next writer waits until it is dropped.
pub struct Turn<'a> {
    slot: MutexGuard<'a, Slot>,
    kept: &'a AtomicUsize,
}

impl Turn<'_> {
    fn take(&mut self) -> Option<Last> {
        let last = self.slot.last.take()?;
        self.kept.fetch_sub(last.3, Ordering::Relaxed);
        Some(last)
    }

    /// What the last writer of `key` wrote, if the turn holds it (turns
    /// are shared by hash: another key's value stays) and it is a `T`;
    /// taken, not copied.
    pub fn take_last<T: 'static>(&mut self, key: &str) -> Option<Versioned<T>> {
        if self.slot.last.as_ref().is_none_or(|last| last.0 != key) {
            return None;
        }
        let (_, version, value, _) = self.take()?;
        let value = *value.downcast::<T>().ok()?;
        Some(Versioned { version, value })
    }

    /// Records what this writer wrote (`bytes` encoded), for the next
    /// writer of `key`, unless the turns hold their budget already.
    pub fn wrote<T: Send + 'static>(&mut self, key: &str, version: u64, value: T, bytes: usize) {
        drop(self.take());
        let fits = self
            .kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                (kept + bytes <= KEPT_BYTES).then_some(kept + bytes)
            })
            .is_ok();
        if fits {
            self.slot.last = Some((key.to_string(), version, Box::new(value), bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
