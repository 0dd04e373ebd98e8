//! The catalog's currencies follow the shop's markets (docs/markets.md,
//! "Currencies"): every second each replica reads the markets the cart
//! service keeps in the shared store, and a currency they sell that the
//! listing has no price index for gets one (the listing is built again
//! from the products, every index it had where it was). `ListChanges`
//! tells search, which then indexes prices in it too.

use std::sync::Arc;
use std::time::Duration;

use storefront_domain::catalog::ProductFacts;
use storefront_domain::currencies::Currencies;
use storefront_domain::interned::Interned;
use storefront_domain::markets::{self, MarketSet};
use storefront_platform::error::ServiceError;
use storefront_platform::shared_document::MARKETS;
use storefront_platform::store::Store;
use tokio_util::sync::CancellationToken;

use crate::live::Live;
use crate::store::{Catalog, listing};

/// Looks for a currency to index every second, until shutdown.
pub async fn follow(live: Live, store: Store, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
        match MARKETS.stored(&store, markets::parse).await {
            Ok(Some((_, set))) => {
                if let Err(e) = live.price_in(&set).await {
                    tracing::warn!(error = %e, "a new currency could not be indexed yet");
                }
            }
            Ok(None) => {}
            Err(e) => tracing::debug!(error = %e, "the markets could not be read"),
        }
    }
}

impl Live {
    /// Gives the listing a price index for each currency `set` sells that
    /// it has none for; nothing when there is none (the usual second).
    pub(crate) async fn price_in(&self, set: &MarketSet) -> Result<(), ServiceError> {
        if self.read().currencies.extended(set).is_none() {
            return Ok(());
        }
        let _turn = self.writer.lock().await;
        let current = self.read();
        let Some(wider) = current.currencies.extended(set) else {
            return Ok(());
        };
        let wider = Arc::new(wider);
        let build = move || current.priced_in(wider);
        let next =
            storefront_platform::cpu::run_once_waited_on("catalog-currencies", build).await??;
        tracing::info!(currencies = %next.currencies.listed(), "the catalog prices in a new currency");
        storefront_platform::cpu::drop_off_requests(self.swap(Arc::new(next)));
        Ok(())
    }
}

impl Catalog {
    /// This version with a price index for each of `currencies` (its own,
    /// in the same order, and more).
    pub fn priced_in(&self, currencies: Arc<Currencies>) -> Result<Catalog, ServiceError> {
        // One `Interned` for all: their brands, paths and sets held once.
        let mut strings = Interned::default();
        let facts = (0..self.products.len() as u32)
            .map(|row| Ok(ProductFacts::interned(&self.product(row)?, &mut strings)))
            .collect::<Result<Vec<_>, ServiceError>>()?;
        let mut next = self.clone();
        next.listing = listing(&facts, &currencies);
        next.currencies = currencies;
        Ok(next)
    }
}
