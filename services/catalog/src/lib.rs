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

/// Runs the catalog service as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_common::config::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = CatalogConfig::from_env(&env)?;
    let listener = TcpListener::bind(config.service.listen_addr).await?;
    serve(config, listener, shutdown).await
}

/// Generates the catalog and serves it on `listener` until `shutdown`.
pub async fn serve(
    config: CatalogConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let catalog = store::Catalog::new(generate::generate(config.size, config.seed));
    tracing::info!(
        products = catalog.products.len(),
        categories = catalog.categories.len(),
        elapsed_ms = started.elapsed().as_millis() as u64,
        "catalog generated"
    );
    let service = CatalogServiceServer::new(service::CatalogApi::new(catalog));
    storefront_common::server::serve_grpc(&config.service, service, listener, shutdown).await
}
