//! The shop's markets as the cart service holds them (docs/markets.md):
//! read from `MARKETS_FILE` at start (or the demo locally, or none in
//! production until a set is put), kept in the shared store so that every
//! replica works from the same set, set whole on the internal port
//! (`PUT /internal/markets`), each replica taking up a new set within a
//! second.

use std::sync::{Arc, RwLock};

use storefront_domain::markets::{self, DEMO, MarketSet};
use storefront_platform::error::ServiceError;
use storefront_platform::store::Store;
use storefront_proto::cart::v1::MarketsDocument;

use tokio_util::sync::CancellationToken;

use crate::config::MarketsSource;
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

#[derive(Clone)]
pub struct Markets(Arc<RwLock<Arc<Loaded>>>);

impl Markets {
    /// The set to start with: the shared store's; else the file's (checked,
    /// then kept there for every replica); else the demo's or none.
    pub async fn start(source: &MarketsSource, store: &Store) -> anyhow::Result<Self> {
        let loaded = if let Some((version, set)) = DOCUMENT.stored(store, markets::parse).await? {
            Loaded::new(set, version)
        } else {
            match source {
                MarketsSource::File(path) => {
                    let bytes = std::fs::read(path)
                        .map_err(|e| anyhow::anyhow!("MARKETS_FILE {}: {e}", path.display()))?;
                    let set = markets::parse(&bytes).map_err(|e| {
                        anyhow::anyhow!("MARKETS_FILE {}: {}", path.display(), problems(&e))
                    })?;
                    let loaded = Loaded::new(set, 0);
                    DOCUMENT.store(store, &loaded.json).await?;
                    loaded
                }
                MarketsSource::Demo => Loaded::new(markets::parse(DEMO.as_bytes())?, 0),
                MarketsSource::None => {
                    tracing::warn!(
                        "no markets: MARKETS_FILE is not set; none until a set is put on the internal port"
                    );
                    Loaded::new(
                        MarketSet {
                            markets: Vec::new(),
                        },
                        0,
                    )
                }
            }
        };
        Ok(Self(Arc::new(RwLock::new(Arc::new(loaded)))))
    }

    /// The demo markets, not stored (tests).
    #[cfg(test)]
    pub fn demo() -> Self {
        let set = markets::parse(DEMO.as_bytes()).expect("the demo markets");
        Self(Arc::new(RwLock::new(Arc::new(Loaded::new(set, 0)))))
    }

    pub fn current(&self) -> Arc<Loaded> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn take(&self, loaded: Loaded) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(loaded);
    }

    /// Checks `document` whole and makes it the set of every replica: a
    /// 422 naming each problem by its path, and nothing changed, when it
    /// has any.
    pub async fn set(&self, store: &Store, document: &[u8]) -> Result<Arc<Loaded>, ServiceError> {
        let loaded = Loaded::new(markets::parse(document)?, 0);
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
        let take = move |version, set| self.take(Loaded::new(set, version));
        DOCUMENT
            .follow(store, seen, markets::parse, take, shutdown)
            .await;
    }
}

/// A refused set's problems, one per line's worth, for a start-up error.
fn problems(e: &ServiceError) -> String {
    let each: Vec<String> = e
        .violations
        .iter()
        .map(|v| format!("{}: {}", v.field, v.message))
        .collect();
    each.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_set_put_is_the_one_every_replica_takes_up() {
        let shared = Store::memory();
        let one = Markets::start(&MarketsSource::Demo, &shared)
            .await
            .expect("demo");
        assert_eq!(
            (one.current().set.markets.len(), one.current().version),
            (4, 0)
        );
        let two = Markets::start(&MarketsSource::None, &shared)
            .await
            .expect("none");
        assert!(two.current().set.markets.is_empty());
        let only_au = r#"{"markets":[{"id":"au","currencies":[{"code":"AUD","minorUnits":2}],
            "countries":["AU"],"prices":"taxIncluded","tax":{"name":"GST","rates":[{"country":"AU","rate":0.1}]}}]}"#;
        let set = one.set(&shared, only_au.as_bytes()).await.expect("set");
        assert!(set.version > 0);
        // Another replica starting now takes the stored set, not its own.
        let three = Markets::start(&MarketsSource::Demo, &shared)
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
