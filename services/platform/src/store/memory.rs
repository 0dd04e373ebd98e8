//! The in-memory backend: the keys spread over shards, each a map behind
//! its own mutex, expiry checked on read and swept per shard, so neither a
//! write nor a sweep ever holds a lock over every key.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Versioned;

/// Expired entries of a shard are swept after this many of its inserts.
const SWEEP_EVERY: u64 = 1024;
const SHARDS: usize = 32;

struct Entry {
    version: u64,
    value: Vec<u8>,
    expires: Option<Instant>,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|at| at > now)
    }
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Entry>,
    inserts: u64,
}

#[derive(Clone)]
pub struct MemoryStore {
    shards: Arc<[Mutex<Inner>]>,
    hasher: RandomState,
    /// Streams and sets (`super::events`): few keys, one lock.
    events: Arc<Mutex<super::events::MemoryEvents>>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            events: Arc::default(),
        }
    }
}

impl MemoryStore {
    pub(super) fn events(&self) -> MutexGuard<'_, super::events::MemoryEvents> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn shard(&self, key: &str) -> usize {
        self.hasher.hash_one(key) as usize % self.shards.len()
    }

    fn lock_shard(&self, shard: usize) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-written entry
        // (every write is one map operation), so a poisoned lock is usable.
        self.shards[shard].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock(&self, key: &str) -> MutexGuard<'_, Inner> {
        self.lock_shard(self.shard(key))
    }

    pub fn get(&self, key: &str) -> Option<Versioned<Vec<u8>>> {
        let now = Instant::now();
        let inner = self.lock(key);
        inner
            .map
            .get(key)
            .filter(|e| e.live(now))
            .map(|e| Versioned {
                version: e.version,
                value: e.value.clone(),
            })
    }

    fn exists(inner: &Inner, key: &str, now: Instant) -> bool {
        inner.map.get(key).is_some_and(|e| e.live(now))
    }

    fn put(
        inner: &mut Inner,
        key: &str,
        version: u64,
        value: &[u8],
        ttl: Option<Duration>,
        now: Instant,
    ) {
        inner.inserts += 1;
        if inner.inserts.is_multiple_of(SWEEP_EVERY) {
            inner.map.retain(|_, e| e.live(now));
        }
        let expires = ttl.map(|t| now + t);
        inner.map.insert(
            key.to_string(),
            Entry {
                version,
                value: value.to_vec(),
                expires,
            },
        );
    }

    pub fn insert(&self, key: &str, value: &[u8], ttl: Option<Duration>) -> bool {
        let now = Instant::now();
        let mut inner = self.lock(key);
        if Self::exists(&inner, key, now) {
            return false;
        }
        Self::put(&mut inner, key, 1, value, ttl, now);
        true
    }

    pub fn insert_indexed(&self, key: &str, value: &[u8], index: &str, index_value: &[u8]) -> bool {
        let now = Instant::now();
        let (a, b) = (self.shard(key), self.shard(index));
        if a == b {
            let mut inner = self.lock_shard(a);
            if Self::exists(&inner, key, now) || Self::exists(&inner, index, now) {
                return false;
            }
            Self::put(&mut inner, key, 1, value, None, now);
            Self::put(&mut inner, index, 1, index_value, None, now);
            return true;
        }
        // Two shards, always locked in the same order: no deadlock.
        let (mut first, mut second) = (self.lock_shard(a.min(b)), self.lock_shard(a.max(b)));
        let (value_shard, index_shard) = if a < b {
            (&mut *first, &mut *second)
        } else {
            (&mut *second, &mut *first)
        };
        if Self::exists(value_shard, key, now) || Self::exists(index_shard, index, now) {
            return false;
        }
        Self::put(value_shard, key, 1, value, None, now);
        Self::put(index_shard, index, 1, index_value, None, now);
        true
    }

    pub fn replace(
        &self,
        key: &str,
        expected: u64,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Option<u64> {
        let now = Instant::now();
        let mut inner = self.lock(key);
        let (current, expires) = inner
            .map
            .get(key)
            .filter(|e| e.live(now))
            .map(|e| (e.version, e.expires))?;
        if current != expected {
            return None;
        }
        Self::put(&mut inner, key, current + 1, value, ttl, now);
        if ttl.is_none()
            && let Some(entry) = inner.map.get_mut(key)
        {
            entry.expires = expires;
        }
        Some(current + 1)
    }

    pub fn delete(&self, key: &str) -> bool {
        let now = Instant::now();
        self.lock(key).map.remove(key).is_some_and(|e| e.live(now))
    }
}
