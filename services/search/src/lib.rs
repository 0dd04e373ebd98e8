//! The search service: a tantivy index built from the catalog's streamed
//! export at start, then following the catalog change by change
//! (`follow`: within a second), rebuilt whole when the catalog was
//! replaced (an import) or on a reindex call; swapped in without a gap.

mod analyzer;
mod build;
mod clients;
pub mod config;
mod facets;
mod follow;
mod index;
mod passes;
mod reindex;
mod search;
mod service;
mod suggest;
mod synonyms;
mod text_query;
mod view;
mod vocabulary;
mod word_matches;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use storefront_platform::client::Peer;
use storefront_platform::client::call::Caller;
use storefront_platform::identity::token_source::TokenSource;
use storefront_platform::service::Serving;
use storefront_platform::topology;
use storefront_proto::search::v1::search_service_server::SearchServiceServer;
use tokio_util::sync::CancellationToken;

pub use crate::config::SearchConfig;

storefront_platform::service! {
    /// The search service as the mesh runs it.
    Search: topology::SEARCH, SearchConfig, serve
}

pub async fn serve(config: SearchConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store: _,
        shutdown,
    } = serving;
    let tokens = Arc::new(TokenSource::new(config.identity_tokens.clone()));
    let c = &config.catalog;
    let catalog = Caller::for_background(Peer::new(
        c.name,
        &c.url,
        &c.audience,
        tokens,
        config.grpc_timeout,
    )?);
    let currencies = config.currencies.clone();
    let empty = build::build(std::iter::empty::<build::Batch>(), &[], currencies.clone())?;
    let api = service::SearchApi {
        current: Arc::new(RwLock::new(Arc::new(empty))),
        catalog,
        synonyms: Arc::new(synonyms::Synonyms::new(&config.synonyms)),
        inline_postings: config.inline_postings,
        updating: Arc::default(),
        built: Arc::new(tokio::sync::watch::Sender::new(false)),
        currencies: Arc::new(RwLock::new(currencies)),
        reindexed: Arc::default(),
    };
    // Listening at once, alive and not ready, while the first index is
    // built: a catalog away for long keeps search pods waiting, not
    // restarting. Every search before it is refused as UNAVAILABLE.
    tokio::spawn(first_build(api.clone(), config.follow, shutdown.clone()));
    let mut built = api.built.subscribe();
    let ready = async move {
        if built.wait_for(|b| *b).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    storefront_platform::server::serve_grpc_once_ready(
        &config.service,
        SearchServiceServer::new(api),
        listener,
        shutdown,
        ready,
    )
    .await
}

/// Builds the first index, then follows the catalog. The catalog is
/// usually still starting: asked again every 100 ms (a refused loopback
/// or cluster connection costs little), so search is ready soon after it;
/// said once, then every 10 s.
async fn first_build(api: service::SearchApi, follow: Duration, shutdown: CancellationToken) {
    let mut attempts = 0u32;
    while let Err(e) = api.rebuild().await {
        if attempts.is_multiple_of(100) {
            tracing::warn!(error = %e, "waiting for the catalog to build the search index");
        }
        attempts += 1;
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
    keep_following(api, follow, shutdown).await;
}

/// Follows the catalog's changes every `every`.
async fn keep_following(api: service::SearchApi, every: Duration, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        if let Err(e) = api.follow().await {
            tracing::debug!(error = %e, "search could not follow the catalog; serving the version it has");
        }
    }
}
