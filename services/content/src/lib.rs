//! The content service: footer, pages and banners per locale, from JSON
//! files a merchandiser edits (or the built-in demo set), reloadable
//! without a restart.

pub mod config;
mod files;
mod library;
mod service;
mod watch;

use std::sync::{Arc, RwLock};

use storefront_platform::service::Serving;
use storefront_platform::topology;
use storefront_proto::content::v1::content_service_server::ContentServiceServer;

pub use crate::config::ContentConfig;

storefront_platform::service! {
    /// The content service as the mesh runs it.
    Content: topology::CONTENT, ContentConfig, serve
}

pub async fn serve(config: ContentConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store: _,
        shutdown,
    } = serving;
    let mut api = service::ContentApi {
        library: Arc::default(),
        dir: config.dir.clone(),
        fallbacks: config.fallbacks.clone(),
    };
    let library = api.load()?;
    tracing::info!(documents = library.len(), "content loaded");
    api.library = Arc::new(RwLock::new(Arc::new(library)));
    if let (Some(dir), Some(every)) = (&config.dir, config.watch) {
        let dir: Arc<std::path::Path> = Arc::from(dir.as_path());
        tokio::spawn(watch::follow(api.clone(), dir, every, shutdown.clone()));
    }
    storefront_platform::server::serve_grpc(
        &config.service,
        ContentServiceServer::new(api),
        listener,
        shutdown,
    )
    .await
}
