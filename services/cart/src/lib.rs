//! The cart service: carts priced by the catalog, promotions, and checkout
//! whose confirmation creates exactly one order in the orders service.

pub mod carts;
mod catalog_calls;
mod category_keys;
mod checkout;
mod claims;
mod clients;
pub mod config;
pub mod discounts;
mod gather;
mod hold_ledgers;
pub mod hold_limits;
mod holds;
pub mod ledger_book;
pub mod ledger_kept;
mod ledger_writes;
mod lines;
mod market_set;
mod merge;
mod offer;
mod order_calls;
mod owned;
mod payment_calls;
pub mod pricing;
pub mod promotion_set;
pub mod promotions;
mod quote;
mod raw;
mod refresh;
mod service;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use storefront_platform::client::Peer;
use storefront_platform::client::call::{Caller, Current};
use storefront_platform::identity::token_source::TokenSource;
use storefront_platform::service::Serving;
use storefront_platform::store::Store;
use storefront_platform::topology;
use storefront_platform::topology::PeerConfig;

/// Products kept to price lines (`CART_PRODUCT_CACHE_MS`): a few MB.
const PRODUCTS_KEPT: usize = 4_096;
use storefront_proto::catalog::v1::ListCategoriesRequest;
use storefront_proto::common::v1::{ListQuery, PageRequest};
use tokio_util::sync::CancellationToken;

pub use crate::config::CartConfig;
use crate::config::PromotionsSource;
use crate::promotions::Catalogue;

storefront_platform::service! {
    /// The cart service as the mesh runs it.
    Cart: topology::CART, CartConfig, serve, state in redis
}

pub async fn serve(config: CartConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store,
        shutdown,
    } = serving;
    let refusals = store.refusals();
    let tokens = Arc::new(TokenSource::new(config.identity_tokens.clone()));
    let peer = |c: &PeerConfig| {
        Peer::new(
            c.name,
            &c.url,
            &c.audience,
            tokens.clone(),
            config.grpc_timeout,
        )
    };
    let catalog = Caller::new(peer(&config.catalog)?);
    let orders = Caller::new(peer(&config.orders)?);
    let payments = Caller::new(peer(&config.payments)?);
    let (initial, seen) = initial_promotions(&config.promotions, &store).await?;
    let demo = initial.demo;
    let promotions = Arc::new(RwLock::new(initial));
    if demo {
        tokio::spawn(scope_promotions(
            Caller::for_background(catalog.peer.clone()),
            promotions.clone(),
            shutdown.clone(),
        ));
    }
    tokio::spawn(promotion_set::follow(
        store.clone(),
        promotions.clone(),
        seen,
        shutdown.clone(),
    ));
    let markets = market_set::Markets::start(&config.markets, &store).await?;
    tokio::spawn(markets.clone().follow(store.clone(), shutdown.clone()));
    let catalog_peer: Arc<dyn clients::CatalogPeer> = Arc::new(catalog_calls::Gathered::new(
        Arc::new(clients::MeshCatalog(catalog)),
    ));
    let category_keys = Arc::new(category_keys::CategoryKeys::new(catalog_peer.clone()));
    let carts = Arc::new(carts::Carts {
        store: store.clone(),
        catalog: catalog_peer.clone(),
        recent_products: storefront_platform::recent::Recent::new(
            config.product_cache,
            PRODUCTS_KEPT,
        ),
        promotions,
        limits: config.limits,
        markets: markets.clone(),
        category_keys,
    });
    let holds = holds::Holds {
        store: store.clone(),
        catalog: catalog_peer,
        ledgers: hold_ledgers::Ledgers::new(store.clone(), config.hold_limits, config.checkout_ttl),
    };
    let checkout = Arc::new(checkout::Checkout {
        store: store.clone(),
        carts: carts.clone(),
        orders: Arc::new(order_calls::GatheredOrders::new(Arc::new(
            clients::MeshOrders(orders),
        ))),
        payments: Arc::new(payment_calls::GatheredPayments::new(Arc::new(
            clients::MeshPayments(payments),
        ))),
        holds,
        markets: markets.clone(),
        ttl: config.checkout_ttl,
        guest_ttl: config.checkout_ttl_guest,
        confirms: Default::default(),
    });
    tokio::spawn(checkout.clone().sweep(shutdown.clone()));
    let api = service::CartApi {
        carts,
        checkout,
        merge: config.merge,
        markets,
    };
    storefront_platform::server::serve_grpc_on(
        &config.service,
        raw::CartServer::new(api),
        listener,
        shutdown,
        refusals,
    )
    .await
}

/// The promotions to start with, and the shared store's version of them
/// (0: not from the store): the set the shared store holds; else the
/// file's (checked, and then kept there for every replica); else the
/// demo set or none.
async fn initial_promotions(
    source: &PromotionsSource,
    store: &Store,
) -> anyhow::Result<(Catalogue, u64)> {
    if let Some((version, set)) = promotion_set::stored(store).await? {
        return Ok((Catalogue::new(set), version));
    }
    Ok(match source {
        PromotionsSource::File(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("PROMOTIONS_FILE {}: {e}", path.display()))?;
            let set = promotion_set::parse(&bytes).map_err(|e| {
                let problems: Vec<String> = e
                    .violations
                    .iter()
                    .map(|v| format!("{}: {}", v.field, v.message))
                    .collect();
                anyhow::anyhow!(
                    "PROMOTIONS_FILE {}: {}",
                    path.display(),
                    problems.join("; ")
                )
            })?;
            promotion_set::store(store, &bytes).await?;
            (Catalogue::new(set), 0)
        }
        PromotionsSource::Demo => (Catalogue::demo(promotions::demo(Vec::new())), 0),
        PromotionsSource::None => {
            tracing::warn!(
                "no promotions: PROMOTIONS_FILE is not set; none apply until some are set"
            );
            (Catalogue::new(Vec::new()), 0)
        }
    })
}

/// Resolves the category scopes of the demo promotions from the catalog,
/// retrying until it answers (until then they apply to nothing).
async fn scope_promotions(
    catalog: Caller,
    promotions: Arc<RwLock<Catalogue>>,
    shutdown: CancellationToken,
) {
    let query = ListQuery {
        page: Some(PageRequest {
            limit: 100,
            offset: 0,
        }),
        ..Default::default()
    };
    for attempt in 0u64.. {
        if shutdown.is_cancelled() {
            return;
        }
        let message = ListCategoriesRequest {
            query: Some(query.clone()),
        };
        let reply = clients::Catalog(&catalog)
            .list_categories(&Current, message)
            .await
            .ok();
        if let Some(reply) = reply {
            let shoes = reply
                .categories
                .into_iter()
                .filter(|c| c.key.ends_with("-shoes"))
                .filter_map(|c| c.meta.map(|m| m.id))
                .collect();
            let mut current = promotions.write().unwrap_or_else(|p| p.into_inner());
            if current.demo {
                *current = Catalogue::demo(promotions::demo(shoes));
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(200 * (attempt + 1).min(25))).await;
    }
}

#[cfg(test)]
mod invariants;
