//! A reindex reaches every search replica (issue 50, item 6): the replica
//! asked raises the catalog's reindex generation, then rebuilds; every
//! other one sees the raised generation at its next follow (500 ms) and
//! rebuilds too. The generation lives with the catalog, which every replica
//! already follows, so no call has to find each replica.

use std::sync::atomic::Ordering;

use storefront_platform::client::call::{CallError, Current};
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::RequestReindexRequest;
use storefront_proto::search::v1::ReindexResponse;

use crate::clients::{Catalog, unavailable};
use crate::service::SearchApi;

impl SearchApi {
    /// The reindex RPC: raised for every replica, then done here (holding
    /// the turn, so this replica's own follow does not rebuild again).
    pub async fn reindex_everywhere(&self) -> Result<ReindexResponse, ServiceError> {
        let _turn = self.updating.lock().await;
        let asked = Catalog(&self.catalog)
            .request_reindex(&Current, RequestReindexRequest {})
            .await;
        match asked {
            Ok(reply) => {
                self.reindexed
                    .fetch_max(reply.reindex_generation, Ordering::AcqRel);
            }
            // A catalog from before the generation (mid-roll): this
            // replica alone, as before.
            Err(CallError::Status(s)) if s.code() == tonic::Code::Unimplemented => {
                tracing::warn!(
                    "the catalog keeps no reindex generation yet: this replica alone rebuilds"
                );
            }
            Err(e) => return Err(unavailable(e)),
        }
        self.rebuild_now().await
    }

    /// Whether the catalog's `generation` asks this replica to rebuild: it
    /// rose since the last one seen. The first one seen is recorded only
    /// (the index was just built from the catalog); 0 says nothing.
    pub(crate) fn reindex_asked(&self, generation: u64) -> bool {
        if generation == 0 {
            return false;
        }
        let seen = self.reindexed.fetch_max(generation, Ordering::AcqRel);
        seen != 0 && generation > seen
    }
}
