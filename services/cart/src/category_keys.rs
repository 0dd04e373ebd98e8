//! Category ids to keys, as the catalog has them: a tax rate by category
//! names a key (docs/markets.md), a cart line carries its product's
//! category ids (its own and its ancestors'). Asked of the catalog at most
//! once a minute, by one request at a time, and only while a market has a
//! rate by category.

use std::collections::HashMap;
use std::sync::Arc;
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
    held: Mutex<Option<(Instant, Keys)>>,
}

impl CategoryKeys {
    pub fn new(catalog: Arc<dyn CatalogPeer>) -> Self {
        Self {
            catalog,
            held: Mutex::new(None),
        }
    }

    /// The map, asked afresh when older than a minute; the last one while
    /// the catalog is away, and 503 when there is none yet.
    pub async fn current(&self) -> Result<Keys, ServiceError> {
        let mut held = self.held.lock().await;
        if let Some((at, keys)) = held.as_ref()
            && at.elapsed() < FRESH
        {
            return Ok(keys.clone());
        }
        match self.fetch().await {
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
