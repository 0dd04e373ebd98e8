//! Turns: this process's writers of one key queue for it instead of
//! racing (see [`super::Store::read_held`]), and the writer whose turn it
//! is starts from what the one before it wrote, while anyone is waiting:
//! a busy key's write is then one compare-and-set, without reading or
//! decoding the key first. The compare-and-set still decides: a value written
//! meanwhile by another replica fails it, and the writer reads and
//! retries as without a turn.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard};

use super::Versioned;

/// Turn locks: a fixed number, whatever the keys (never a map keyed by
/// client input); unrelated keys share one only by a hash collision.
const TURNS: usize = 1024;

/// The value the last holder wrote, decoded, for the next holder.
type Last = (String, u64, Box<dyn Any + Send>);

#[derive(Default)]
struct Slot {
    /// The key, version and value the last holder wrote, kept only while
    /// someone waits (so the memory held is bounded by the waiting
    /// writers), and handed to the next holder.
    last: Option<Last>,
}

#[derive(Default)]
struct Lock {
    slot: Mutex<Slot>,
    waiting: AtomicUsize,
}

pub struct Turns(Box<[Lock]>);

impl Default for Turns {
    fn default() -> Self {
        Self((0..TURNS).map(|_| Lock::default()).collect())
    }
}

impl Turns {
    pub async fn take(&self, key: &str) -> Turn<'_> {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(key);
        let lock = &self.0[(hash % TURNS as u64) as usize];
        lock.waiting.fetch_add(1, Ordering::AcqRel);
        let slot = lock.slot.lock().await;
        lock.waiting.fetch_sub(1, Ordering::AcqRel);
        Turn {
            slot,
            waiting: &lock.waiting,
        }
    }
}

/// One writer's turn at a key; the next writer waits until it is dropped.
pub struct Turn<'a> {
    slot: MutexGuard<'a, Slot>,
    waiting: &'a AtomicUsize,
}

impl Turn<'_> {
    /// What the writer before this one wrote to `key`, if it was `key`
    /// (turns are shared by hash) and a `T`; taken, not copied.
    pub fn take_last<T: 'static>(&mut self, key: &str) -> Option<Versioned<T>> {
        match self.slot.last.take() {
            Some((k, version, value)) if k == key => {
                let value = *value.downcast::<T>().ok()?;
                Some(Versioned { version, value })
            }
            _ => None,
        }
    }

    /// Records what this writer wrote, for the next one.
    pub fn wrote<T: Send + 'static>(&mut self, key: &str, version: u64, value: T) {
        self.slot.last = Some((key.to_string(), version, Box::new(value)));
    }

    /// Whether a writer is waiting for this turn (whether what this one
    /// writes is worth keeping).
    pub fn awaited(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.waiting.load(Ordering::Acquire) == 0 {
            self.slot.last = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_last_write_is_kept_only_for_a_waiting_writer() {
        let turns = std::sync::Arc::new(Turns::default());
        let mut first = turns.take("k").await;
        let waiter = tokio::spawn({
            let turns = turns.clone();
            async move {
                let mut turn = turns.take("k").await;
                turn.take_last::<String>("k").map(|v| (v.version, v.value))
            }
        });
        while !first.awaited() {
            tokio::task::yield_now().await;
        }
        first.wrote("k", 7, "seven".to_string());
        assert_eq!(
            first.take_last::<String>("other"),
            None,
            "another key sharing the turn"
        );
        first.wrote("k", 7, "seven".to_string());
        drop(first);
        assert_eq!(waiter.await.unwrap(), Some((7, "seven".into())));
        // Nobody waited for the waiter: nothing is kept.
        assert_eq!(turns.take("k").await.take_last::<String>("k"), None);
    }
}
