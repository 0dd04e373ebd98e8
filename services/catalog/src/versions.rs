//! Making the catalog's next version, alone or among replicas. Writers take
//! turns in a process; with a shared store (`shared`) a version is also
//! claimed in its journal, so that of several replicas writing at once
//! each version is one replica's, and the others catch up (replaying the
//! entry) and try again. Readers never wait: a version is swapped in whole.

use std::sync::Arc;
use storefront_proto::error::codes;

use prost::Message;
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::storage::v1::{Head, JournalEntry};

use crate::changes::ChangeLog;
use crate::edit::Change;
use crate::live::Live;
use crate::shared::{Claimed, Shared};
use crate::store::Catalog;

/// Tries at claiming a version before a write gives up (each lost try
/// means another replica wrote meanwhile).
const CLAIM_TRIES: usize = 64;

fn busy() -> ServiceError {
    ServiceError::new(
        storefront_platform::error::ErrorKind::Conflict,
        codes::CONCURRENT_MODIFICATION,
        "the catalog is changing fast; retry",
    )
}

impl Live {
    /// The catalog version being served.
    pub(crate) fn current(&self) -> Arc<Catalog> {
        self.read()
    }

    /// Serves `next` and hands back the version it replaces: dropped by the
    /// caller once the lock is released (readers wait on it), off the
    /// request threads for a whole catalog (`drop_off_requests`).
    #[must_use = "the replaced version is the caller's to drop"]
    pub(crate) fn swap(&self, next: Arc<Catalog>) -> Arc<Catalog> {
        storefront_platform::telemetry::metrics::catalog_version("catalog_version", next.version);
        std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|p| p.into_inner()),
            next,
        )
    }

    /// Applies the changes `changes` makes of the current version as the
    /// next one (off the async workers). With a shared store the closure
    /// may run again, against a version another replica made meanwhile.
    pub(crate) async fn change<F>(&self, changes: F) -> Result<Arc<Catalog>, ServiceError>
    where
        F: Fn(&Catalog) -> Result<Vec<Change>, ServiceError> + Send + Sync + 'static,
    {
        let changes = Arc::new(changes);
        let _turn = self.writer.lock().await;
        for _ in 0..CLAIM_TRIES {
            self.catch_up_in_turn().await?;
            let current = self.read();
            let make = changes.clone();
            let changed = tokio::task::spawn_blocking(move || {
                let changes = make(&current)?;
                if changes.is_empty() {
                    return Ok(None);
                }
                current.apply(changes).map(Some)
            })
            .await
            .map_err(|e| ServiceError::internal(e.to_string()))??;
            // Nothing to change: no version.
            let Some(next) = changed else {
                return Ok(self.read());
            };
            let next = Arc::new(next);
            if let Some(shared) = &self.shared {
                let entry = next.journal_entry()?;
                if let Claimed::Taken = shared.claim(next.version, &entry).await? {
                    continue;
                }
                self.checkpoint_if_due(shared, &next).await;
            }
            drop(self.swap(next.clone()));
            return Ok(next);
        }
        Err(busy())
    }

    /// Replaces the catalog whole with `catalog` (an import) as the next
    /// version.
    pub(crate) async fn replace_whole(
        &self,
        catalog: Catalog,
    ) -> Result<Arc<Catalog>, ServiceError> {
        let _turn = self.writer.lock().await;
        let mut next = catalog;
        let Some(shared) = &self.shared else {
            next.version = self.read().version + 1;
            next.changes = Arc::new(ChangeLog::starting_at(next.version));
            let next = Arc::new(next);
            storefront_platform::cpu::drop_off_requests(self.swap(next.clone()));
            return Ok(next);
        };
        let next = Arc::new(next);
        let mut head = shared
            .write_generation(next.clone())
            .await
            .map_err(|e| ServiceError::internal(e.to_string()))?;
        let previous = shared.head().await?;
        for _ in 0..CLAIM_TRIES {
            self.catch_up_in_turn().await?;
            head.version = self.read().version + 1;
            let entry = JournalEntry {
                switch_to: Some(head),
                ..Default::default()
            }
            .encode_to_vec();
            if let Claimed::Taken = shared.claim(head.version, &entry).await? {
                continue;
            }
            shared.publish(&head).await?;
            if let Some(old) = previous {
                shared.forget_later(old);
            }
            let mut next = Arc::unwrap_or_clone(next);
            next.version = head.version;
            next.changes = Arc::new(ChangeLog::starting_at(head.version));
            let next = Arc::new(next);
            storefront_platform::cpu::drop_off_requests(self.swap(next.clone()));
            return Ok(next);
        }
        Err(busy())
    }

    /// Serves what other replicas wrote since the version served.
    pub async fn follow_shared(&self) -> Result<(), ServiceError> {
        let _turn = self.writer.lock().await;
        self.catch_up_in_turn().await
    }

    /// Replays the journal past the version served (the caller holds the
    /// writers' turn).
    async fn catch_up_in_turn(&self) -> Result<(), ServiceError> {
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        loop {
            let current = self.read();
            let version = current.version + 1;
            let Some(entry) = shared.entry(version).await? else {
                return Ok(());
            };
            let whole = entry.switch_to.is_some();
            let next = match entry.switch_to {
                Some(head) => shared
                    .load(&head)
                    .await
                    .map_err(|e| ServiceError::internal(e.to_string()))?,
                None => tokio::task::spawn_blocking(move || {
                    current.replay(entry.puts, &entry.deletes, entry.operations, version)
                })
                .await
                .map_err(|e| ServiceError::internal(e.to_string()))??,
            };
            let replaced = self.swap(Arc::new(next));
            if whole {
                storefront_platform::cpu::drop_off_requests(replaced);
            }
        }
    }

    /// Every so many versions, a generation of the catalog as it is, so a
    /// starting replica replays a bounded journal. Off the write's path.
    async fn checkpoint_if_due(&self, shared: &Shared, next: &Arc<Catalog>) {
        // The head is read only when a checkpoint may be due: not on each
        // write.
        if !shared.checkpoint_may_be_due(next.version) {
            return;
        }
        let Ok(Some(head)) = shared.head().await else {
            return;
        };
        if !Shared::checkpoint_due(&head, next.version) {
            return;
        }
        let (shared, catalog) = (shared.clone(), next.clone());
        tokio::spawn(async move {
            let version = catalog.version;
            match shared.write_generation(catalog).await {
                Ok(written) => {
                    let written = Head { version, ..written };
                    if shared.publish(&written).await.is_ok() {
                        shared.forget_later(head);
                        tracing::info!(version, "catalog checkpoint written");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "catalog checkpoint failed"),
            }
        });
    }
}
