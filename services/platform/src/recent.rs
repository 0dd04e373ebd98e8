//! Values fetched or verified recently, reused for a short while instead
//! of being fetched or verified again: bounded whatever the traffic. Each
//! entry lives at most its `keep`; a full shard drops its stale entries,
//! or all of them (the newest is always kept).

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SHARDS: usize = 16;

type Shard<V> = Mutex<HashMap<Box<str>, (V, Instant)>>;

pub struct Recent<V> {
    shards: Box<[Shard<V>]>,
    keep: Duration,
    per_shard: usize,
    hasher: std::hash::RandomState,
}

impl<V: Clone> Recent<V> {
    /// At most `capacity` entries, each reused for `keep` (zero: never).
    pub fn new(keep: Duration, capacity: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            keep,
            per_shard: capacity.div_ceil(SHARDS).max(1),
            hasher: std::hash::RandomState::new(),
        }
    }

    fn shard(&self, key: &str) -> &Shard<V> {
        &self.shards[(self.hasher.hash_one(key) % SHARDS as u64) as usize]
    }

    /// What was put for `key` less than `keep` ago.
    pub fn get(&self, key: &str) -> Option<V> {
        if self.keep.is_zero() {
            return None;
        }
        let shard = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        let (value, until) = shard.get(key)?;
        (*until > Instant::now()).then(|| value.clone())
    }

    /// Keeps `value` for `key` (nothing when `keep` is zero).
    pub fn put(&self, key: &str, value: V) {
        if self.keep.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut shard = self.shard(key).lock().unwrap_or_else(|p| p.into_inner());
        if shard.len() >= self.per_shard && !shard.contains_key(key) {
            shard.retain(|_, (_, until)| *until > now);
            if shard.len() >= self.per_shard {
                shard.clear();
            }
        }
        shard.insert(key.into(), (value, now + self.keep));
    }

    /// Entries held, stale ones included.
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_reused_until_its_time_is_up() {
        let recent = Recent::new(Duration::from_millis(50), 10);
        recent.put("a", 1);
        assert_eq!(recent.get("a"), Some(1));
        assert_eq!(recent.get("b"), None);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(recent.get("a"), None, "stale");
    }

    #[test]
    fn it_never_holds_more_than_its_capacity_and_keeps_the_newest() {
        let recent = Recent::new(Duration::from_secs(60), 1_000);
        for n in 0..5_000 {
            recent.put(&format!("key-{n}"), n);
        }
        assert!(recent.len() <= 1_000 + SHARDS, "{}", recent.len());
        assert_eq!(recent.get("key-4999"), Some(4_999));
    }

    #[test]
    fn zero_keep_holds_nothing() {
        let recent = Recent::new(Duration::ZERO, 10);
        recent.put("a", 1);
        assert!(recent.is_empty());
        assert_eq!(recent.get("a"), None);
    }
}
