//! The content service: footer, pages and banners per locale, from JSON
//! files a merchandiser edits (or the built-in demo set), reloadable
//! without a restart.

pub mod config;
mod files;
mod library;
mod service;

use std::sync::{Arc, RwLock};

use storefront_proto::content::v1::content_service_server::ContentServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::config::ContentConfig;

/// Runs the content service as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_platform::env::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = ContentConfig::from_env(&env)?;
    let listener = TcpListener::bind(config.service.program.listen_addr).await?;
    serve(config, listener, shutdown).await
}

pub async fn serve(
    config: ContentConfig,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut api = service::ContentApi {
        library: Arc::default(),
        dir: config.dir.clone(),
        fallbacks: config.fallbacks.clone(),
    };
    let library = api.load()?;
    tracing::info!(documents = library.len(), "content loaded");
    api.library = Arc::new(RwLock::new(Arc::new(library)));
    storefront_platform::server::serve_grpc(
        &config.service,
        ContentServiceServer::new(api),
        listener,
        shutdown,
    )
    .await
}
