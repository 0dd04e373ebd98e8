//! Category ids to keys, as the catalog has them: a tax rate by category
//! names a key (docs/markets.md), a cart line carries its product's
//! category ids (its own and its ancestors'). Asked of the catalog at most
//! once a minute, by one request at a time, and only while a market has a
//! rate by category.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::ListCategoriesRequest;
use storefront_proto::common::v1::{ListQuery, PageRequest};
use storefront_proto::error::codes;
use tokio::sync::Mutex;

use crate::clients::CatalogPeer;

/// How long a map is used before it is asked for again.
const FRESH: Duration = Duration::from_secs(60);
/// Categories per page, and pages at most: 20,000 categories.
const PAGE: u32 = 100;
const MAX_PAGES: u32 = 200;

pub type Keys = Arc<HashMap<String, String>>;

pub struct CategoryKeys {
    catalog: Arc<dyn CatalogPeer>,
    /// The map and when it was asked for: read by every quote (a cart
    /// write, a checkout), so a read lock, held for a clone.
    held: RwLock<Option<(Instant, Keys)>>,
    /// One request asks the catalog at a time; the others wait for it.
    asking: Mutex<()>,
}

impl CategoryKeys {
    pub fn new(catalog: Arc<dyn CatalogPeer>) -> Self {
        Self {
            catalog,
            held: RwLock::new(None),
            asking: Mutex::new(()),
        }
    }

    fn fresh(&self) -> Option<Keys> {
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        held.as_ref()
            .filter(|(at, _)| at.elapsed() < FRESH)
            .map(|(_, keys)| keys.clone())
    }

    /// The map, asked afresh when older than a minute; the last one while
    /// the catalog is away, and 503 when there is none yet.
    pub async fn current(&self) -> Result<Keys, ServiceError> {
        if let Some(keys) = self.fresh() {
            return Ok(keys);
        }
        let _asking = self.asking.lock().await;
        // Asked meanwhile by the request this one waited for.
        if let Some(keys) = self.fresh() {
            return Ok(keys);
        }
        let fetched = self.fetch().await;
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        match fetched {
            Ok(keys) => {
                let keys = Arc::new(keys);
                *held = Some((Instant::now(), keys.clone()));
                Ok(keys)
            }
            Err(e) => match held.as_ref() {
                Some((_, keys)) => {
                    tracing::warn!(error = %e, "category keys kept from before");
                    Ok(keys.clone())
                }
                None => Err(e),
            },
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, String>, ServiceError> {
        let mut keys = HashMap::new();
        for page in 0..MAX_PAGES {
            let message = ListCategoriesRequest {
                query: Some(ListQuery {
                    page: Some(PageRequest {
                        limit: PAGE,
                        offset: u64::from(page * PAGE),
                    }),
                    ..Default::default()
                }),
            };
            let reply = self.catalog.list_categories(message).await.map_err(|e| {
                e.unavailable(
                    codes::CATALOG_UNAVAILABLE,
                    "the catalog is unreachable; retry",
                )
            })?;
            let count = reply.categories.len() as u32;
            for category in reply.categories {
                if let Some(meta) = category.meta {
                    keys.insert(meta.id, category.key);
                }
            }
            if count < PAGE {
                break;
            }
        }
        Ok(keys)
    }
}
