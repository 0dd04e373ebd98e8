//! The catalog's live state: the current version (readers take it and
//! never wait), the writers' turn, the shared store it is kept in, the
//! queues of stock writes for the next version. The writers (`writes`,
//! `stock`, `versions`) take it; the tonic handler (`service`) adapts it.

use std::sync::{Arc, OnceLock, RwLock};

use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::{AdjustStockReply, AdjustStockRequest};
use tokio::sync::{mpsc, oneshot};

use crate::edit::Stock;
use crate::feed::limits::FeedLimits;
use crate::shared::Shared;
use crate::store::Catalog;

/// A stock operation waiting for the next version, and where its answer
/// goes.
pub(crate) type Pending = (
    AdjustStockRequest,
    oneshot::Sender<Result<AdjustStockReply, ServiceError>>,
);

/// One request's stock levels (`SetStock`) waiting for the next version,
/// and where the version that applied them (or the request's refusal)
/// goes.
pub(crate) type PendingLevels = (
    Vec<Stock>,
    oneshot::Sender<Result<Arc<Catalog>, ServiceError>>,
);

/// The queues of stock writes for the next version, each started by its
/// first write: operations (`stock::adjust`) and levels set (`levels`).
#[derive(Clone, Default)]
pub struct StockQueue {
    pub(crate) queue: Arc<OnceLock<mpsc::UnboundedSender<Pending>>>,
    pub(crate) levels: Arc<OnceLock<mpsc::UnboundedSender<PendingLevels>>>,
}

/// `first` and what else waits in `receive` now, at most `max` in all:
/// what the next version applies together.
pub(crate) fn waiting<T>(first: T, receive: &mut mpsc::UnboundedReceiver<T>, max: usize) -> Vec<T> {
    let mut batch = vec![first];
    while batch.len() < max {
        match receive.try_recv() {
            Ok(next) => batch.push(next),
            Err(_) => break,
        }
    }
    batch
}

#[derive(Clone)]
pub struct Live {
    pub(crate) current: Arc<RwLock<Arc<Catalog>>>,
    /// Writers (and, with a shared store, catching up with other
    /// replicas) take turns; readers never wait for them (`versions`).
    pub(crate) writer: Arc<tokio::sync::Mutex<()>>,
    /// The shared store the catalog is kept in, if any.
    pub(crate) shared: Option<Shared>,
    /// Stock operations waiting for the next version.
    pub(crate) stock: StockQueue,
    /// What an import may make of its categories.
    pub(crate) feed_limits: FeedLimits,
    /// The reindex generation without a shared store (`reindex`).
    pub(crate) reindex: Arc<std::sync::atomic::AtomicU64>,
}

impl Live {
    pub fn new(catalog: Catalog, shared: Option<Shared>) -> Self {
        storefront_platform::telemetry::metrics::catalog_version(
            "catalog_version",
            catalog.version,
        );
        Self {
            current: Arc::new(RwLock::new(Arc::new(catalog))),
            writer: Arc::default(),
            shared,
            stock: Default::default(),
            feed_limits: Default::default(),
            reindex: Arc::new(1.into()),
        }
    }

    pub(crate) fn read(&self) -> Arc<Catalog> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
