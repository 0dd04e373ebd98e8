//! A document the shop sets whole (its promotions, its markets), kept in
//! the shared store so that every replica works from the same one: set by
//! compare-and-set, read back with its version, and followed (each
//! replica looks for a newer one every second).

use std::time::Duration;

use crate::error::{ErrorKind, ServiceError};
use crate::store::Store;
use storefront_proto::error::codes;
use tokio_util::sync::CancellationToken;

/// Where one kind of document is kept, and what it is called in errors.
#[derive(Debug, Clone, Copy)]
pub struct SharedDocument {
    pub key: &'static str,
    pub what: &'static str,
}

/// The shop's markets (docs/markets.md): set on the cart service, followed
/// by every program that prices in their currencies.
pub const MARKETS: SharedDocument = SharedDocument {
    key: "markets:set",
    what: "markets",
};

impl SharedDocument {
    /// Keeps `bytes` (already checked) as the document every replica uses.
    pub async fn store(&self, store: &Store, bytes: &[u8]) -> Result<(), ServiceError> {
        for _ in 0..16 {
            let written = match store.get(self.key).await? {
                Some(found) => store
                    .replace(self.key, found.version, bytes, None)
                    .await?
                    .is_some(),
                None => store.insert(self.key, bytes, None).await?,
            };
            if written {
                return Ok(());
            }
        }
        Err(ServiceError::new(
            ErrorKind::Conflict,
            codes::CONCURRENT_MODIFICATION,
            format!("the {} are being changed; retry", self.what),
        ))
    }

    /// The document in the shared store, read by `parse`, with its store
    /// version, if one was set.
    pub async fn stored<T>(
        &self,
        store: &Store,
        parse: impl Fn(&[u8]) -> Result<T, ServiceError>,
    ) -> Result<Option<(u64, T)>, ServiceError> {
        let Some(found) = store.get(self.key).await? else {
            return Ok(None);
        };
        Ok(Some((found.version, parse(&found.value)?)))
    }

    /// Hands `take` each newer document another replica stored, every
    /// second, until shutdown (`seen`: the version taken at start).
    pub async fn follow<T>(
        self,
        store: Store,
        mut seen: u64,
        parse: impl Fn(&[u8]) -> Result<T, ServiceError>,
        take: impl Fn(u64, T),
        shutdown: CancellationToken,
    ) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            match self.stored(&store, &parse).await {
                Ok(Some((version, document))) if version != seen => {
                    seen = version;
                    take(version, document);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(error = %e, what = self.what, "document could not be read")
                }
            }
        }
    }
}
