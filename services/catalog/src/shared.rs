//! The catalog in the shared store (`REDIS_URL`), so that a restarted
//! catalog or a second replica serves the same products. What is kept:
//!
//! - generations: a snapshot of the catalog as feed text (docs/feed.md),
//!   LZ4-compressed in chunks of about 8 MB (`catalog:gen:{g}:{i}`);
//! - a journal: one entry per catalog version after its generation's
//!   (`catalog:v:{version}`): the products that version changed, as they
//!   are now, and those it deleted; or a switch to another generation (an
//!   import, a checkpoint). Writing the entry for version v is how a
//!   replica claims v: created once, so of two replicas changing the
//!   catalog at once exactly one gets v, and the other catches up and
//!   tries again. Every replica replays the same entries in order, exact
//!   (timestamps included), so they hold the same catalog;
//! - the head (`catalog:head`): the generation and version a starting
//!   replica loads before replaying the journal after it.
//!
//! Replicas poll for the next entry every `FOLLOW_EVERY` (and before each
//! write): another replica's change is served within a second. Every
//! `CHECKPOINT_EVERY` versions a replica writes a new generation, so a
//! starting replica replays a bounded journal; journal entries and old
//! replaced generations go after ten minutes.

use std::io::{BufReader, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use storefront_platform::error::ServiceError;
use storefront_platform::store::Store;
use storefront_proto::catalog::storage::v1::{Head, JournalEntry};
use tokio::sync::mpsc;

use crate::changes::ChangeLog;
use crate::feed::limits::FeedLimits;
use crate::feed::source::Chunks;
use crate::store::Catalog;

/// How often a replica looks for a version another one wrote.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(200);
/// Versions between generations written by a replica on its own.
const CHECKPOINT_EVERY: u64 = 50_000;
/// How long journal entries and replaced generations stay.
const KEEP: Duration = Duration::from_secs(24 * 3600);
/// Feed text per stored chunk, before compression.
const CHUNK_BYTES: usize = 8 << 20;

const HEAD: &str = "catalog:head";

fn entry_key(version: u64) -> String {
    format!("catalog:v:{version}")
}

fn chunk_key(generation: u64, i: u32) -> String {
    format!("catalog:gen:{generation:016x}:{i}")
}

#[derive(Clone)]
pub struct Shared {
    store: Store,
    /// What a stored catalog is read with, as a feed.
    limits: FeedLimits,
    /// The version of the newest head this process read or published.
    head_at: Arc<AtomicU64>,
}

/// What claiming a version came to.
pub enum Claimed {
    Yes,
    /// Another replica wrote that version first: catch up and try again.
    Taken,
}

impl Shared {
    pub fn new(store: Store, limits: FeedLimits) -> Self {
        Self {
            store,
            limits,
            head_at: Arc::default(),
        }
    }

    /// Notes a head this process read or published.
    fn saw_head(&self, head: &Head) {
        self.head_at.fetch_max(head.version, Ordering::Relaxed);
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    pub async fn head(&self) -> Result<Option<Head>, ServiceError> {
        let head = self.store.get_message::<Head>(HEAD).await?.map(|h| h.value);
        if let Some(head) = &head {
            self.saw_head(head);
        }
        Ok(head)
    }

    /// The catalog of `head`'s generation, at its version.
    pub async fn load(&self, head: &Head) -> anyhow::Result<Catalog> {
        let (send, chunks) = mpsc::channel::<std::io::Result<Bytes>>(4);
        let store = self.store.clone();
        let head_ = *head;
        tokio::spawn(async move {
            for i in 0..head_.chunks {
                let chunk = match store.get(&chunk_key(head_.generation, i)).await {
                    Ok(Some(found)) => lz4_flex::decompress_size_prepended(&found.value)
                        .map(Bytes::from)
                        .map_err(std::io::Error::other),
                    Ok(None) => Err(std::io::Error::other(format!(
                        "generation chunk {i} is gone"
                    ))),
                    Err(e) => Err(std::io::Error::other(e.to_string())),
                };
                let failed = chunk.is_err();
                if send.send(chunk).await.is_err() || failed {
                    return;
                }
            }
        });
        let version = head.version;
        let limits = self.limits.clone();
        let reader = BufReader::with_capacity(1 << 20, Chunks::new(chunks));
        storefront_platform::cpu::run_once_waited_on("catalog-load", move || {
            let parts = crate::feed::read(reader, limits)?;
            let mut catalog = Catalog::new(parts);
            catalog.version = version;
            catalog.changes = Arc::new(ChangeLog::starting_at(version));
            anyhow::Ok(catalog)
        })
        .await?
    }

    /// Writes `catalog` as a new generation; its head (not yet current).
    pub async fn write_generation(&self, catalog: Arc<Catalog>) -> anyhow::Result<Head> {
        let generation = fastrand::u64(..);
        let (send, mut chunks) = mpsc::channel::<Vec<u8>>(2);
        let writer = tokio::task::spawn_blocking(move || {
            let mut sink = ChunkSink {
                text: Vec::with_capacity(CHUNK_BYTES + (1 << 20)),
                send,
            };
            crate::feed::write(
                &catalog.categories,
                &catalog.products,
                &catalog.collections,
                &mut sink,
            )
        });
        let mut count = 0u32;
        while let Some(compressed) = chunks.recv().await {
            self.store
                .insert(&chunk_key(generation, count), &compressed, None)
                .await?;
            count += 1;
        }
        writer.await??;
        Ok(Head {
            generation,
            version: 0,
            chunks: count,
        })
    }

    /// Makes `head` the one starting replicas load, unless another replica
    /// set one first (at start); whether it did.
    pub async fn publish_first(&self, head: &Head) -> Result<bool, ServiceError> {
        let first = self.store.insert_message(HEAD, head, None).await?;
        if first {
            self.saw_head(head);
        }
        Ok(first)
    }

    /// Moves the head to `head` (a later generation).
    pub async fn publish(&self, head: &Head) -> Result<(), ServiceError> {
        for _ in 0..16 {
            let current = self.store.get_message::<Head>(HEAD).await?;
            let moved = match current {
                Some(c) if c.value.version >= head.version => {
                    self.saw_head(&c.value);
                    return Ok(());
                }
                Some(c) => self
                    .store
                    .replace(HEAD, c.version, &prost::Message::encode_to_vec(head), None)
                    .await?
                    .is_some(),
                None => self.store.insert_message(HEAD, head, None).await?,
            };
            if moved {
                self.saw_head(head);
                return Ok(());
            }
        }
        Ok(())
    }

    /// The journal entry of `version`, if written.
    pub async fn entry(&self, version: u64) -> Result<Option<JournalEntry>, ServiceError> {
        Ok(self
            .store
            .get_message::<JournalEntry>(&entry_key(version))
            .await?
            .map(|e| e.value))
    }

    /// Claims `version` with `entry` (a `JournalEntry`, encoded).
    pub async fn claim(&self, version: u64, entry: &[u8]) -> Result<Claimed, ServiceError> {
        let created = self
            .store
            .insert(&entry_key(version), entry, Some(KEEP))
            .await?;
        Ok(if created {
            Claimed::Yes
        } else {
            Claimed::Taken
        })
    }

    /// Deletes the chunks of a generation no longer current, once replicas
    /// loading it have had time to (best effort: a process that stops
    /// first leaves them).
    pub fn forget_later(&self, old: Head) {
        let store = self.store.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(600)).await;
            for i in 0..old.chunks {
                let _ = store.delete(&chunk_key(old.generation, i)).await;
            }
        });
    }

    /// Whether the replica that wrote `version` should write a checkpoint.
    pub fn checkpoint_due(head: &Head, version: u64) -> bool {
        version >= head.version + CHECKPOINT_EVERY
    }

    /// Whether a checkpoint may be due at `version`, known without reading
    /// the head: heads only move forward (`publish`), so none is due before
    /// the newest this process read or published, plus `CHECKPOINT_EVERY`.
    pub fn checkpoint_may_be_due(&self, version: u64) -> bool {
        version >= self.head_at.load(Ordering::Relaxed) + CHECKPOINT_EVERY
    }
}

/// Feed text in, compressed chunks of about `CHUNK_BYTES` out, cut at
/// line ends so that every chunk is whole lines.
struct ChunkSink {
    text: Vec<u8>,
    send: mpsc::Sender<Vec<u8>>,
}

impl ChunkSink {
    fn ship(&mut self, upto: usize) -> std::io::Result<()> {
        let rest = self.text.split_off(upto);
        let compressed = lz4_flex::compress_prepend_size(&self.text);
        self.text = rest;
        self.send
            .blocking_send(compressed)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }
}

impl Write for ChunkSink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(data);
        if self.text.len() >= CHUNK_BYTES
            && let Some(end) = self.text.iter().rposition(|&b| b == b'\n')
        {
            self.ship(end + 1)?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.text.is_empty() {
            let all = self.text.len();
            self.ship(all)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_head_is_looked_at_only_once_a_checkpoint_may_be_due() {
        let shared = Shared::new(Store::memory(), FeedLimits::default());
        assert!(!shared.checkpoint_may_be_due(CHECKPOINT_EVERY - 1));
        assert!(shared.checkpoint_may_be_due(CHECKPOINT_EVERY));
        let at = |version| Head {
            version,
            ..Default::default()
        };
        assert!(shared.publish_first(&at(70_000)).await.unwrap());
        assert!(!shared.checkpoint_may_be_due(70_000 + CHECKPOINT_EVERY - 1));
        assert!(shared.checkpoint_may_be_due(70_000 + CHECKPOINT_EVERY));
        // Another replica's checkpoint counts once read here.
        let other = Shared::new(shared.store().clone(), FeedLimits::default());
        other.publish(&at(130_000)).await.unwrap();
        assert!(shared.checkpoint_may_be_due(120_000), "not read yet");
        shared.head().await.unwrap();
        assert!(!shared.checkpoint_may_be_due(120_000));
        // A head behind the one seen does not move it back.
        shared.publish(&at(100_000)).await.unwrap();
        assert!(!shared.checkpoint_may_be_due(130_000 + CHECKPOINT_EVERY - 1));
    }
}
