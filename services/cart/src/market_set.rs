//! The shop's markets as the cart service holds them (docs/markets.md):
//! read from `MARKETS_FILE` at start (the demo's locally; production and
//! staging require the file), kept in the shared store so that every
//! replica works from the same set, set whole on the internal port
//! (`PUT /internal/markets`), each replica taking up a new set within a
//! second. A set may add currencies, as many as the programs index.

use std::sync::{Arc, RwLock};

use storefront_domain::currencies::{Currencies, MAX_CURRENCIES};
use storefront_domain::markets::{self, MarketSet, Source};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::cart::v1::MarketsDocument;
use storefront_proto::error::codes;

use tokio_util::sync::CancellationToken;

use storefront_platform::shared_document::SharedDocument;

const DOCUMENT: SharedDocument = storefront_platform::shared_document::MARKETS;

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

/// The shop's markets as they are now, and the currencies the programs
/// price in: the file's at start and, after them, any a set put since has
/// added (the catalog and search add a price index for each within
/// seconds), at most `MAX_CURRENCIES` until the programs restart.
#[derive(Clone)]
pub struct Markets {
    now: Arc<RwLock<Arc<Loaded>>>,
    indexed: Arc<RwLock<Arc<Currencies>>>,
}

/// A 422 for each currency of `set` past the `MAX_CURRENCIES` the programs
/// index (`indexed` and those `set` adds), named by its path.
fn beyond(set: &MarketSet, indexed: &Currencies) -> Vec<FieldViolation> {
    let mut known: Vec<&str> = indexed.codes().iter().map(|c| c.as_str()).collect();
    let mut out = Vec::new();
    for (i, market) in set.markets.iter().enumerate() {
        for (j, currency) in market.currencies.iter().enumerate() {
            if known.contains(&currency.code.as_str()) {
                continue;
            }
            if known.len() < MAX_CURRENCIES {
                known.push(&currency.code);
                continue;
            }
            let message = format!(
                "the shop prices in at most {MAX_CURRENCIES} currencies between restarts \
                 (a price index each), and has {}: to drop one, restart the programs \
                 with a MARKETS_FILE without it",
                indexed.listed()
            );
            let field = format!("markets[{i}].currencies[{j}].code");
            out.push(FieldViolation::new(field, codes::INVALID_VALUE, message));
        }
    }
    out
}

impl Markets {
    /// The set to start with: the shared store's (a restart never undoes a
    /// live change); else the file's (or the demo's), then kept there for
    /// every replica.
    pub async fn start(source: &Source, store: &Store) -> anyhow::Result<Self> {
        let own = source.read().map_err(|m| anyhow::anyhow!(m))?;
        let started = Currencies::of(&own);
        let stored = DOCUMENT.stored(store, markets::parse).await?;
        let loaded = match stored {
            Some((version, set)) if beyond(&set, &started).is_empty() => Loaded::new(set, version),
            stored => {
                if stored.is_some() {
                    tracing::warn!(
                        "the stored markets sell more currencies than the programs index: the file's set replaces them"
                    );
                }
                let loaded = Loaded::new(own, 0);
                if *source != Source::Demo || stored.is_some() {
                    DOCUMENT.store(store, &loaded.json).await?;
                }
                loaded
            }
        };
        let indexed = started.extended(&loaded.set).unwrap_or(started);
        Ok(Self {
            now: Arc::new(RwLock::new(Arc::new(loaded))),
            indexed: Arc::new(RwLock::new(Arc::new(indexed))),
        })
    }

    /// The demo markets, not stored (tests).
    #[cfg(test)]
    pub fn demo() -> Self {
        let set = markets::parse(markets::DEMO.as_bytes()).expect("the demo markets");
        Self {
            indexed: Arc::new(RwLock::new(Arc::new(Currencies::of(&set)))),
            now: Arc::new(RwLock::new(Arc::new(Loaded::new(set, 0)))),
        }
    }

    /// The currencies the programs index prices in.
    pub fn indexed(&self) -> Arc<Currencies> {
        self.indexed
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn current(&self) -> Arc<Loaded> {
        self.now.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn take(&self, loaded: Loaded) {
        let indexed = self.indexed();
        if let Some(wider) = indexed.extended(&loaded.set) {
            *self.indexed.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(wider);
        }
        *self.now.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    /// Checks `document` whole and makes it the set of every replica: a
    /// 422 naming each problem by its path, and nothing changed, when it
    /// has any.
    pub async fn set(&self, store: &Store, document: &[u8]) -> Result<Arc<Loaded>, ServiceError> {
        let set = markets::parse(document)?;
        let outside = beyond(&set, &self.indexed());
        if !outside.is_empty() {
            let message = "the markets sell more currencies than the programs index";
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
            if beyond(&set, &self.indexed()).is_empty() {
                self.take(Loaded::new(set, version));
            } else {
                tracing::warn!(
                    "a stored markets set sells more currencies than this replica indexes: not taken"
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
        // A currency added live is indexed from then on; past eight in all
        // (the demo's four, JPY and three more), the rest are refused.
        let yen = r#"{"markets":[{"id":"jp","currencies":[{"code":"JPY","minorUnits":0}],
            "countries":["JP"],"prices":"taxIncluded","tax":{"name":"VAT","rates":[{"country":"JP","rate":0.1}]}}]}"#;
        one.set(&shared, yen.as_bytes()).await.expect("JPY");
        assert_eq!(one.indexed().listed(), "AUD, NZD, USD, EUR, JPY");
        let codes = ["GBP", "CAD", "CHF", "SEK", "NOK"];
        let currencies: Vec<String> = codes
            .iter()
            .map(|c| format!(r#"{{"code":"{c}","minorUnits":2}}"#))
            .collect();
        let many = format!(
            r#"{{"markets":[{{"id":"eu","currencies":[{}],"countries":["GB"],"prices":"taxIncluded",
            "tax":{{"name":"VAT","rates":[{{"country":"GB","rate":0.2}}]}}}}]}}"#,
            currencies.join(",")
        );
        let refused = one.set(&shared, many.as_bytes()).await.expect_err("nine");
        let fields: Vec<&str> = refused
            .violations
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert_eq!(
            fields,
            [
                "markets[0].currencies[3].code",
                "markets[0].currencies[4].code"
            ]
        );
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
