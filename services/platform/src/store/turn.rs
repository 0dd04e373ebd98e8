//! Turns: this process's writers of one key queue for it instead of
//! racing (see [`super::Store::turn`]), and the writer whose turn it is
//! starts from what the one before it wrote, while anyone is waiting:
//! a busy key's write is then one compare-and-set, without reading the
//! key first. The compare-and-set still decides: a value written
//! meanwhile by another replica fails it, and the writer reads and
//! retries as without a turn.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard};

use super::Versioned;

/// Turn locks: a fixed number, whatever the keys (never a map keyed by
/// client input); unrelated keys share one only by a hash collision.
const TURNS: usize = 1024;

#[derive(Default)]
struct Slot {
    /// The key and value the last holder wrote, kept only while someone
    /// waits (so the memory held is bounded by the waiting writers).
    last: Option<(String, Versioned<Vec<u8>>)>,
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
    /// (turns are shared by hash).
    pub fn last(&self, key: &str) -> Option<Versioned<Vec<u8>>> {
        match &self.slot.last {
            Some((k, value)) if k == key => Some(value.clone()),
            _ => None,
        }
    }

    /// Records what this writer wrote, for the next one.
    pub fn wrote(&mut self, key: &str, version: u64, value: Vec<u8>) {
        self.slot.last = Some((key.to_string(), Versioned { version, value }));
    }

    /// Forgets the last write (it lost a compare-and-set: stale).
    pub fn forget(&mut self) {
        self.slot.last = None;
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
            async move { turns.take("k").await.last("k").map(|v| v.version) }
        });
        while turns
            .0
            .iter()
            .all(|l| l.waiting.load(Ordering::Acquire) == 0)
        {
            tokio::task::yield_now().await;
        }
        first.wrote("k", 7, b"seven".to_vec());
        assert_eq!(first.last("other"), None, "another key sharing the turn");
        drop(first);
        assert_eq!(waiter.await.unwrap(), Some(7));
        // Nobody waited for the waiter: nothing is kept.
        assert_eq!(turns.take("k").await.last("k"), None);
    }
}
