//! The in-memory backend: one map behind a mutex, expiry checked on read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Versioned;

/// Expired entries are swept after this many inserts.
const SWEEP_EVERY: u64 = 4096;

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

#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
}

impl MemoryStore {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-written entry
        // (every write is one map operation), so a poisoned lock is usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn get(&self, key: &str) -> Option<Versioned<Vec<u8>>> {
        let now = Instant::now();
        let inner = self.lock();
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
        let mut inner = self.lock();
        if Self::exists(&inner, key, now) {
            return false;
        }
        Self::put(&mut inner, key, 1, value, ttl, now);
        true
    }

    pub fn insert_indexed(&self, key: &str, value: &[u8], index: &str, index_value: &[u8]) -> bool {
        let now = Instant::now();
        let mut inner = self.lock();
        if Self::exists(&inner, key, now) || Self::exists(&inner, index, now) {
            return false;
        }
        Self::put(&mut inner, key, 1, value, None, now);
        Self::put(&mut inner, index, 1, index_value, None, now);
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
        let mut inner = self.lock();
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
        self.lock().map.remove(key).is_some_and(|e| e.live(now))
    }
}
