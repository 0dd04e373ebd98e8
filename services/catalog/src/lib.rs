//! The catalog service: products with variants and media, the category tree
//! and collections, served over gRPC from a deterministic demo catalog.

pub mod config;
mod generate;
mod service;
mod store;

use storefront_proto::catalog::v1::catalog_service_server::CatalogServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::config::CatalogConfig;

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

/// Generates the catalog and serves it on `listener` until `shutdown`.
pub async fn serve(
    config: CatalogConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    // Every core for a while: off the async workers.
    let (size, seed) = (config.size, config.seed);
    let (catalog, generated_ms) = storefront_platform::cpu::run_once("catalog-build", move || {
        let generated = generate::generate(size, seed);
        let generated_ms = started.elapsed().as_millis() as u64;
        (store::Catalog::new(generated), generated_ms)
    })
    .await?;
    tracing::info!(
        products = catalog.products.len(),
        categories = catalog.categories.len(),
        encoded_bytes = catalog.products.encoded_bytes(),
        held_bytes = catalog.products.held_bytes() as u64,
        generated_ms,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "catalog generated and indexed"
    );
    let service = CatalogServiceServer::new(service::CatalogApi::new(catalog));
    storefront_platform::server::serve_grpc(&config.service, service, listener, shutdown).await
}
