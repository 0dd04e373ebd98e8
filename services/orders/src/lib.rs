//! The orders service: orders created by checkout (idempotently), listed,
//! cancelled by their customer and moved along by fulfilment.

pub mod config;
mod feed;
mod kinds;
mod orders;
pub mod outbox;
pub mod payment;
mod published;
mod restock;
mod service;
mod stored;
mod updates;
pub mod webhooks;

use std::sync::Arc;

use storefront_platform::client::Peer;
use storefront_platform::client::call::Caller;
use storefront_platform::identity::token_source::TokenSource;
use storefront_platform::service::Serving;
use storefront_platform::topology;
use storefront_proto::orders::v1::order_service_server::OrderServiceServer;

pub use crate::config::OrdersConfig;

storefront_platform::service! {
    /// The orders service as the mesh runs it.
    Orders: topology::ORDERS, OrdersConfig, serve, state in redis
}

pub async fn serve(config: OrdersConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store,
        shutdown,
    } = serving;
    let refusals = store.refusals();
    let tokens = Arc::new(TokenSource::new(config.identity_tokens.clone()));
    let peer = |c: &storefront_platform::topology::PeerConfig| {
        Peer::new(
            c.name,
            &c.url,
            &c.audience,
            tokens.clone(),
            config.grpc_timeout,
        )
    };
    let outbox = outbox::Outbox {
        store: store.clone(),
        catalog: Some(Caller::new(peer(&config.catalog)?)),
        payments: Some(Caller::new(peer(&config.payments)?)),
        capture: config.capture,
    };
    tokio::spawn(outbox.clone().sweep(shutdown.clone()));
    let webhooks = match config.webhooks {
        Some(settings) => {
            let endpoints = settings.endpoints.clone();
            let every = config.service.program.secrets_watch;
            let followed = settings.follow_secret().into_iter().collect();
            storefront_platform::secret_files::watch(followed, every, shutdown.clone());
            let deliverer = webhooks::Deliverer::new(store.clone(), settings)?;
            tokio::spawn(deliverer.run(shutdown.clone()));
            endpoints
        }
        None => Vec::new(),
    };
    let api = service::OrdersApi {
        orders: Arc::new(orders::Orders { store, outbox }),
        webhooks: Arc::new(webhooks),
    };
    storefront_platform::server::serve_grpc_on(
        &config.service,
        OrderServiceServer::new(api),
        listener,
        shutdown,
        refusals,
    )
    .await
}
