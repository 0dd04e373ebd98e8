//! The catalog service: products with variants and media, the category tree
//! and collections, served over gRPC from a deterministic demo catalog.

mod changes;
pub mod config;
mod currencies;
mod edit;
mod export;
pub mod feed;
mod generate;
mod imports;
mod levels;
mod live;
mod offer;
mod oplog;
mod reindex;
mod service;
mod shared;
mod stock;
mod store;
mod units;
mod versions;
mod writes;

use storefront_platform::service::Serving;
use storefront_platform::store::Store;
use storefront_platform::topology;

use crate::feed::limits::FeedLimits;
use storefront_proto::catalog::v1::catalog_service_server::CatalogServiceServer;

pub use crate::config::{CatalogConfig, Origin};

/// The first `count` demo products as listings show them, priced in
/// `currency`: realistic records for benchmarks and tools.
pub fn sample_products(
    count: usize,
    currency: &str,
) -> Vec<storefront_proto::catalog::v1::Product> {
    let generated = generate::generate(count, 42);
    (0..generated.products.len() as u32)
        .filter_map(|row| generated.products.decode(row).ok())
        .map(|p| {
            let mut p = storefront_domain::catalog::summary(&p);
            storefront_domain::catalog::price_in(&mut p, currency);
            p
        })
        .collect()
}

storefront_platform::service! {
    /// The catalog service as the mesh runs it.
    Catalog: topology::CATALOG, CatalogConfig, serve, state in redis
}

/// Builds the catalog from its origin (or, with a Redis store that holds
/// one, from there) and serves it until shutdown. A feed
/// with any problem stops the service before it listens, its problems
/// (with line numbers) in the error.
pub async fn serve(config: CatalogConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store,
        shutdown,
    } = serving;
    let refusals = store.refusals();
    // In memory the catalog is this process's alone: nothing to share.
    let markets_store = store.clone();
    let shared = match store {
        Store::Redis(_) => Some(shared::Shared::new(store, config.feed_limits.clone())),
        Store::Memory(_) => None,
    };
    let catalog = match &shared {
        Some(shared) => open_shared(shared, &config.origin, config.feed_limits.clone()).await?,
        None => build(&config.origin, config.feed_limits.clone()).await?,
    };
    let mut api = service::CatalogApi::new(catalog, shared.clone());
    api.feed_limits = config.feed_limits;
    tokio::spawn(currencies::follow(
        api.0.clone(),
        markets_store,
        shutdown.clone(),
    ));
    if shared.is_some() {
        let (api, stop) = (api.clone(), shutdown.clone());
        tokio::spawn(async move {
            loop {
                if let Err(e) = api.follow_shared().await {
                    tracing::warn!(error = %e, "the catalog could not follow the shared store");
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(shared::FOLLOW_EVERY) => {}
                }
            }
        });
    }
    let service = CatalogServiceServer::new(api);
    storefront_platform::server::serve_grpc_on(
        &config.service,
        service,
        listener,
        shutdown,
        refusals,
    )
    .await
}

/// The catalog the shared store holds; or, the first time, the one built
/// from `origin`, written there (a replica starting at the same moment
/// may win that race: its catalog is taken then). The shared store wins
/// over `CATALOG_FEED` once it holds a catalog: a restart never undoes
/// live changes (a new feed goes in by an import).
async fn open_shared(
    shared: &shared::Shared,
    origin: &Origin,
    limits: FeedLimits,
) -> anyhow::Result<store::Catalog> {
    if let Some(head) = shared.head().await? {
        tracing::info!(
            version = head.version,
            "catalog loading from the shared store"
        );
        return shared.load(&head).await;
    }
    let catalog = std::sync::Arc::new(build(origin, limits).await?);
    let mut head = shared.write_generation(catalog.clone()).await?;
    head.version = catalog.version;
    if shared.publish_first(&head).await? {
        return Ok(std::sync::Arc::unwrap_or_clone(catalog));
    }
    shared.forget_later(head);
    let theirs = shared
        .head()
        .await?
        .ok_or_else(|| anyhow::anyhow!("the shared catalog's head vanished"))?;
    shared.load(&theirs).await
}

async fn build(origin: &Origin, limits: FeedLimits) -> anyhow::Result<store::Catalog> {
    let started = std::time::Instant::now();
    let reader = match origin {
        Origin::Feed(source) => Some(source.open().await?),
        _ => None,
    };
    let from = origin.clone();
    // Every core for a while: off the async workers.
    let catalog = storefront_platform::cpu::run_once("catalog-build", move || {
        let parts = match (from, reader) {
            (Origin::Generated { size, seed, media }, _) => {
                let media = media.as_deref().unwrap_or(generate::IMAGE_BASE);
                generate::generate_in(size, seed, limits.currencies.clone(), media)
            }
            (Origin::Feed(source), Some(reader)) => feed::read(reader, limits)
                .map_err(|e| anyhow::anyhow!("{}: {e}", source.shown()))?,
            _ => store::Parts::empty(limits.currencies.clone()),
        };
        anyhow::Ok(store::Catalog::new(parts))
    })
    .await??;
    let source = match origin {
        Origin::Feed(source) => source.shown(),
        Origin::Generated { .. } => "the demo generator".to_string(),
        Origin::Empty => "nothing".to_string(),
    };
    tracing::info!(
        source,
        products = catalog.products.len(),
        categories = catalog.categories.len(),
        encoded_bytes = catalog.products.encoded_bytes(),
        held_bytes = catalog.products.held_bytes() as u64,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "catalog built and indexed"
    );
    if matches!(origin, Origin::Empty) {
        tracing::warn!(
            "no catalog: CATALOG_FEED is not set; serving an empty catalog until one is imported"
        );
    }
    Ok(catalog)
}
