//! The reindex generation (issue 50, item 6): a search reindex asked of one
//! search replica must reach every one. The catalog is what every search
//! replica already follows, so it keeps a number that each reindex raises
//! and `ListChanges` carries; a replica that saw a lower one rebuilds. With
//! a shared store the number is the version of one key, so that every
//! catalog replica answers the same; without one, this replica's counter.
//! Generations start at 1: 0 on the wire means "not known".

use std::sync::atomic::Ordering;

use storefront_platform::error::ServiceError;

use crate::live::Live;

const KEY: &str = "catalog:reindex";

impl Live {
    /// The current generation; 0 when the shared store cannot be read at
    /// the moment (an indexer then asks again at its next follow).
    pub(crate) async fn reindex_generation(&self) -> u64 {
        let Some(shared) = &self.shared else {
            return self.reindex.load(Ordering::Acquire);
        };
        match shared.store().get(KEY).await {
            Ok(found) => found.map_or(1, |v| v.version + 1),
            Err(e) => {
                tracing::warn!(error = %e, "the reindex generation could not be read");
                0
            }
        }
    }

    /// Raises the generation by one; the new one. Two at once raise it
    /// twice (each a compare-and-set of the key's version).
    pub(crate) async fn raise_reindex_generation(&self) -> Result<u64, ServiceError> {
        let Some(shared) = &self.shared else {
            return Ok(self.reindex.fetch_add(1, Ordering::AcqRel) + 1);
        };
        let store = shared.store();
        loop {
            let raised = match store.get(KEY).await? {
                None => store.insert(KEY, b"", None).await?.then_some(1),
                Some(held) => store.replace(KEY, held.version, b"", None).await?,
            };
            if let Some(version) = raised {
                return Ok(version + 1);
            }
        }
    }
}
