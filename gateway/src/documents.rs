//! Documents the gateway serves from memory (issue 51, target 1). The
//! category tree is one document that changes only with the catalog's
//! categories, and every storefront page asks for it: each gateway keeps
//! its JSON, read again from the catalog at most once a second (one
//! request reads it while the others wait for that read), and forgets it
//! at once when a catalog write passes through this gateway, so that a
//! change made here is served here at once; another gateway serves it
//! within a second. Clients are told the tree may be cached longer still
//! (its caching group's `max-age`).

use std::future::Future;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use storefront_platform::recent::Recent;

use crate::error::ApiError;

/// How long a suggestion answer is reused: the search index follows the
/// catalog every 500 ms, so a change still reaches suggestions well
/// within the 2 s promised; clients may cache them far longer
/// (`CACHE_SEARCH`, 30 s).
pub const SUGGESTIONS_FOR: Duration = Duration::from_millis(500);
/// Suggestion answers held, over all keys: about 20 KB each (8 products),
/// so at most about 10 MB.
pub const SUGGESTIONS_HELD: usize = 512;

/// Suggestion answers by their whole request (words, locale, currency,
/// limit, projection): a storefront's search box asks for the same few
/// short prefixes again and again (`s`, `sh`, `shi`...), so the hottest
/// are answered from memory for half a second; any other costs as before.
pub struct Suggestions(Recent<Bytes>);

impl Default for Suggestions {
    fn default() -> Self {
        Self(Recent::new(SUGGESTIONS_FOR, SUGGESTIONS_HELD))
    }
}

impl Suggestions {
    pub fn get(&self, key: &str) -> Option<Bytes> {
        self.0.get(key)
    }

    pub fn put(&self, key: &str, json: Bytes) {
        self.0.put(key, json);
    }
}

/// How long a tree read from the catalog is served as it is.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct TreeDocument {
    held: RwLock<Option<(Instant, Bytes)>>,
    /// One read from the catalog at a time.
    reading: tokio::sync::Mutex<()>,
    /// Raised by each `forget`: a read that began before one is not kept.
    forgotten: AtomicU64,
}

impl TreeDocument {
    /// The tree's JSON: the one held while fresh, else `read`'s.
    pub async fn json<F, Fut>(&self, read: F) -> Result<Bytes, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Bytes, ApiError>>,
    {
        if let Some(json) = self.fresh() {
            return Ok(json);
        }
        let _turn = self.reading.lock().await;
        if let Some(json) = self.fresh() {
            return Ok(json);
        }
        let epoch = self.forgotten.load(Ordering::Acquire);
        let json = read().await?;
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if self.forgotten.load(Ordering::Acquire) == epoch {
            *held = Some((Instant::now(), json.clone()));
        }
        Ok(json)
    }

    fn fresh(&self) -> Option<Bytes> {
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        held.as_ref()
            .filter(|(at, _)| at.elapsed() < FRESH_FOR)
            .map(|(_, json)| json.clone())
    }

    /// The catalog changed through this gateway: the next request reads
    /// the tree again.
    pub fn forget(&self) {
        self.forgotten.fetch_add(1, Ordering::AcqRel);
        *self.held.write().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[tokio::test]
    async fn held_while_fresh_read_once_by_many_and_forgotten_on_a_change() {
        let tree = TreeDocument::default();
        let reads = AtomicUsize::new(0);
        let read = || async {
            let n = reads.fetch_add(1, Ordering::SeqCst);
            Ok(Bytes::from(format!("{{\"read\":{n}}}")))
        };
        let many = (0..8).map(|_| tree.json(read));
        for json in futures::future::join_all(many).await {
            assert_eq!(json.unwrap(), "{\"read\":0}");
        }
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        tree.forget();
        assert_eq!(tree.json(read).await.unwrap(), "{\"read\":1}");
        tokio::time::sleep(FRESH_FOR).await;
        assert_eq!(tree.json(read).await.unwrap(), "{\"read\":2}");
        let failing = || async { Err(ApiError::unavailable("catalog", "away")) };
        tokio::time::sleep(FRESH_FOR).await;
        assert!(tree.json(failing).await.is_err(), "an error is not held");
    }
}
