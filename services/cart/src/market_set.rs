//! The shop's markets as the cart service holds them (docs/markets.md):
//! read from `MARKETS_FILE` at start (the demo's locally; production and
//! staging require the file), kept in the shared store so that every
//! replica works from the same set, set whole on the internal port
//! (`PUT /internal/markets`), each replica taking up a new set within a
//! second. A set sells only the currencies the file named at start.

use std::sync::{Arc, RwLock};

use storefront_domain::currencies::Currencies;
use storefront_domain::markets::{self, MarketSet, Source};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::cart::v1::MarketsDocument;
use storefront_proto::error::codes;

use tokio_util::sync::CancellationToken;

use crate::shared_document::SharedDocument;

const DOCUMENT: SharedDocument = SharedDocument {
    key: "markets:set",
    what: "markets",
};

/// A set of markets, as checked, with its JSON and its store version (0:
/// not from the store).
#[derive(Debug)]
pub struct Loaded {
    pub set: MarketSet,
    pub json: Vec<u8>,
    pub version: u64,
}

impl Loaded {
    fn new(set: MarketSet, version: u64) -> Self {
        let json = serde_json::to_vec(&set).unwrap_or_default();
        Self { set, json, version }
    }

    pub fn document(&self) -> MarketsDocument {
        MarketsDocument {
            json: self.json.clone(),
            markets: self.set.markets.len() as u32,
            version: self.version,
        }
    }
}

/// The shop's markets as they are now, and the currencies the mesh was
/// started with (the file's): a live set may sell only those, since the
/// catalog and search index prices in them from start.
#[derive(Clone)]
pub struct Markets {
    now: Arc<RwLock<Arc<Loaded>>>,
    started: Arc<Currencies>,
}

/// A 422 for each currency of `set` outside `started`, named by its path.
fn unstarted(set: &MarketSet, started: &Currencies) -> Vec<FieldViolation> {
    let mut out = Vec::new();
    for (i, market) in set.markets.iter().enumerate() {
        for (j, currency) in market.currencies.iter().enumerate() {
            if !started.contains(&currency.code) {
                let message = format!(
                    "{} is not one of the currencies the shop was started with ({}): \
                     add it to MARKETS_FILE and roll the programs out",
                    currency.code,
                    started.listed()
                );
                let field = format!("markets[{i}].currencies[{j}].code");
                out.push(FieldViolation::new(field, codes::INVALID_VALUE, message));
            }
        }
    }
    out
}

impl Markets {
    /// The set to start with: the shared store's, when it sells only the
    /// file's currencies; else the file's (or the demo's), then kept there
    /// for every replica.
    pub async fn start(source: &Source, store: &Store) -> anyhow::Result<Self> {
        let own = source.read().map_err(|m| anyhow::anyhow!(m))?;
        let started = Arc::new(Currencies::of(&own));
        let stored = DOCUMENT.stored(store, markets::parse).await?;
        let loaded = match stored {
            Some((version, set)) if unstarted(&set, &started).is_empty() => {
                Loaded::new(set, version)
            }
            stored => {
                if stored.is_some() {
                    tracing::warn!(
                        "the stored markets sell a currency MARKETS_FILE does not: the file's set replaces them"
                    );
                }
                let loaded = Loaded::new(own, 0);
                if *source != Source::Demo || stored.is_some() {
                    DOCUMENT.store(store, &loaded.json).await?;
                }
                loaded
            }
        };
        Ok(Self {
            now: Arc::new(RwLock::new(Arc::new(loaded))),
            started,
        })
    }

    /// The demo markets, not stored (tests).
    #[cfg(test)]
    pub fn demo() -> Self {
        let set = markets::parse(markets::DEMO.as_bytes()).expect("the demo markets");
        Self {
            started: Arc::new(Currencies::of(&set)),
            now: Arc::new(RwLock::new(Arc::new(Loaded::new(set, 0)))),
        }
    }

    /// The currencies the programs were started with.
    pub fn started(&self) -> &Currencies {
        &self.started
    }

    pub fn current(&self) -> Arc<Loaded> {
        self.now.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn take(&self, loaded: Loaded) {
        *self.now.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    /// Checks `document` whole and makes it the set of every replica: a
    /// 422 naming each problem by its path, and nothing changed, when it
    /// has any.
    pub async fn set(&self, store: &Store, document: &[u8]) -> Result<Arc<Loaded>, ServiceError> {
        let set = markets::parse(document)?;
        let outside = unstarted(&set, &self.started);
        if !outside.is_empty() {
            let message = "the markets sell a currency the shop was not started with";
            let mut refused =
                ServiceError::new(ErrorKind::Validation, codes::VALIDATION_ERROR, message);
            refused.violations = outside;
            return Err(refused);
        }
        let loaded = Loaded::new(set, 0);
        DOCUMENT.store(store, &loaded.json).await?;
        let version = DOCUMENT
            .stored(store, markets::parse)
            .await?
            .map_or(0, |(v, _)| v);
        self.take(Loaded { version, ..loaded });
        Ok(self.current())
    }

    /// Takes up each new set another replica stored, until shutdown.
    pub async fn follow(self, store: Store, shutdown: CancellationToken) {
        let seen = self.current().version;
        let take = move |version, set: MarketSet| {
            if unstarted(&set, &self.started).is_empty() {
                self.take(Loaded::new(set, version));
            } else {
                tracing::warn!(
                    "a stored markets set sells a currency this replica was not started with: not taken"
                );
            }
        };
        DOCUMENT
            .follow(store, seen, markets::parse, take, shutdown)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_set_put_is_the_one_every_replica_takes_up() {
        let shared = Store::memory();
        let one = Markets::start(&Source::Demo, &shared).await.expect("demo");
        assert_eq!(
            (one.current().set.markets.len(), one.current().version),
            (4, 0)
        );
        // Only the currencies the shop was started with.
        let yen = r#"{"markets":[{"id":"jp","currencies":[{"code":"JPY","minorUnits":0}],
            "countries":["JP"],"prices":"taxIncluded","tax":{"name":"VAT","rates":[{"country":"JP","rate":0.1}]}}]}"#;
        let refused = one.set(&shared, yen.as_bytes()).await.expect_err("JPY");
        assert_eq!(refused.violations[0].field, "markets[0].currencies[0].code");
        let only_au = r#"{"markets":[{"id":"au","currencies":[{"code":"AUD","minorUnits":2}],
            "countries":["AU"],"prices":"taxIncluded","tax":{"name":"GST","rates":[{"country":"AU","rate":0.1}]}}]}"#;
        let set = one.set(&shared, only_au.as_bytes()).await.expect("set");
        assert!(set.version > 0);
        // Another replica starting now takes the stored set, not its own.
        let three = Markets::start(&Source::Demo, &shared)
            .await
            .expect("stored");
        assert_eq!(three.current().set.markets.len(), 1);
        assert_eq!(three.current().json, set.json);
        let refused = one
            .set(&shared, b"{\"markets\":[]}")
            .await
            .expect_err("empty");
        assert_eq!(refused.violations[0].field, "markets");
        assert_eq!(one.current().version, set.version, "nothing changed");
    }
}
