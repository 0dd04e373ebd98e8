//! The orders service: orders created by checkout (idempotently), listed,
//! cancelled by their customer and moved along by fulfilment.

mod book;
pub mod config;
mod service;

use std::sync::Arc;

use storefront_platform::store::Store;
use storefront_proto::orders::v1::order_service_server::OrderServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::config::OrdersConfig;

/// Runs the orders service as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_platform::env::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = OrdersConfig::from_env(&env)?;
    let store = Store::open(config.redis_url.as_deref(), "sf:").await?;
    let listener = TcpListener::bind(config.service.program.listen_addr).await?;
    serve(config, store, listener, shutdown).await
}

pub async fn serve(
    config: OrdersConfig,
    store: Store,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let api = service::OrdersApi {
        orders: Arc::new(book::Orders { store }),
    };
    storefront_platform::server::serve_grpc(
        &config.service,
        OrderServiceServer::new(api),
        listener,
        shutdown,
    )
    .await
}
