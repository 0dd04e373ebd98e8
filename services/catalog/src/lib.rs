//! The catalog service: products with variants and media, the category tree
//! and collections, served over gRPC from a deterministic demo catalog.

mod changes;
pub mod config;
mod edit;
pub mod feed;
mod generate;
mod service;
mod store;
mod writes;

use storefront_proto::catalog::v1::catalog_service_server::CatalogServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

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

/// Runs the catalog service as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_platform::env::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = CatalogConfig::from_env(&env)?;
    let listener = TcpListener::bind(config.service.program.listen_addr).await?;
    serve(config, listener, shutdown).await
}

/// Builds the catalog from its origin and serves it on `listener` until
/// `shutdown`. A feed with any problem stops the service before it
/// listens, its problems (with line numbers) in the error.
pub async fn serve(
    config: CatalogConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let catalog = build(&config.origin).await?;
    let service = CatalogServiceServer::new(service::CatalogApi::new(catalog));
    storefront_platform::server::serve_grpc(&config.service, service, listener, shutdown).await
}

async fn build(origin: &Origin) -> anyhow::Result<store::Catalog> {
    let started = std::time::Instant::now();
    let reader = match origin {
        Origin::Feed(source) => Some(source.open().await?),
        _ => None,
    };
    let from = origin.clone();
    // Every core for a while: off the async workers.
    let catalog = storefront_platform::cpu::run_once("catalog-build", move || {
        let parts = match (from, reader) {
            (Origin::Generated { size, seed }, _) => generate::generate(size, seed),
            (Origin::Feed(source), Some(reader)) => {
                feed::read(reader).map_err(|e| anyhow::anyhow!("{}: {e}", source.shown()))?
            }
            _ => store::Parts::empty(),
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
