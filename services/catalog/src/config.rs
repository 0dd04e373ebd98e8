//! The catalog service's configuration.

use std::sync::Arc;

use storefront_domain::currencies::Currencies;
use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::store::RedisTarget;
use storefront_platform::topology;

use crate::feed::limits::{DEEPEST, FeedLimits};
use crate::feed::source::Source;

/// The demo catalog size of the embedded default (at least 1,000).
pub const DEFAULT_SIZE: usize = 1_000;
pub const MAX_SIZE: usize = 1_000_000;

/// Where the catalog comes from at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `CATALOG_FEED`: the shop's own feed.
    Feed(Source),
    /// The deterministic demo generator (`CATALOG_SIZE`, `CATALOG_SEED`):
    /// local and development only.
    /// `DEMO_MEDIA_BASE`: where its media are served (the all-in-one
    /// mesh: its own gateway's `/media/demo`); None: a host that does
    /// not exist.
    Generated {
        size: usize,
        seed: u64,
        media: Option<String>,
    },
    /// Production and staging without a feed: nothing until an import.
    Empty,
}

#[derive(Debug, Clone)]
pub struct CatalogConfig {
    pub service: ServiceSettings,
    pub origin: Origin,
    /// `REDIS_URL`: where the catalog is kept for restarts and replicas
    /// (required in production and staging).
    pub redis: Option<RedisTarget>,
    /// `CATALOG_MAX_CATEGORY_DEPTH`: what a feed may make of its categories.
    pub feed_limits: FeedLimits,
}

/// `CATALOG_MAX_CATEGORY_DEPTH` (12): 1 to 32 levels.
pub fn feed_limits(env: &EnvReader) -> Result<FeedLimits, ConfigError> {
    let default = FeedLimits::default();
    let max_depth = env.parse("CATALOG_MAX_CATEGORY_DEPTH", default.max_depth)?;
    if !(1..=DEEPEST).contains(&max_depth) {
        return Err(ConfigError::new(
            "CATALOG_MAX_CATEGORY_DEPTH",
            format!("must be between 1 and {DEEPEST}"),
        ));
    }
    let deployed = env.environment()?.refuses_dev_shortcuts();
    let currencies = Currencies::from_setting(env.raw("MARKETS_FILE"), deployed)
        .map_err(|m| ConfigError::new("MARKETS_FILE", m))?;
    Ok(FeedLimits {
        max_depth,
        count_required: false,
        currencies: Arc::new(currencies),
    })
}

impl CatalogConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::CATALOG, env)?;
        let environment = service.program.environment;
        let deployed = environment.refuses_dev_shortcuts();
        let origin = match env.raw("CATALOG_FEED").filter(|v| !v.trim().is_empty()) {
            Some(feed) => Origin::Feed(
                Source::parse(feed.trim(), !deployed)
                    .map_err(|e| ConfigError::new("CATALOG_FEED", e))?,
            ),
            None if deployed => {
                if env.raw("CATALOG_SIZE").is_some() {
                    return Err(ConfigError::new(
                        "CATALOG_SIZE",
                        "the demo generator is local and development only; set CATALOG_FEED",
                    ));
                }
                Origin::Empty
            }
            None => {
                let size = env.parse("CATALOG_SIZE", DEFAULT_SIZE)?;
                if !(1..=MAX_SIZE).contains(&size) {
                    return Err(ConfigError::new(
                        "CATALOG_SIZE",
                        format!("must be between 1 and {MAX_SIZE}"),
                    ));
                }
                let media = env
                    .raw("DEMO_MEDIA_BASE")
                    .map(|b| b.trim().trim_end_matches('/').to_string());
                if media
                    .as_deref()
                    .is_some_and(|b| !(b.starts_with("http://") || b.starts_with("https://")))
                {
                    return Err(ConfigError::new("DEMO_MEDIA_BASE", "an http(s) URL"));
                }
                Origin::Generated {
                    size,
                    seed: env.parse("CATALOG_SEED", 42)?,
                    media,
                }
            }
        };
        let redis = env.redis(environment, "the catalog (shared by its replicas)")?;
        Ok(Self {
            service,
            origin,
            redis,
            feed_limits: feed_limits(env)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(pairs: &[(&str, &str)]) -> Result<Origin, String> {
        let mut env = EnvReader::from_pairs(pairs.iter().copied());
        if env.raw("APP_ENV").is_some_and(|e| e != "local") {
            env.set("IDENTITY_ISSUER", "https://accounts.google.com");
            env.set(
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            );
            env.set("REDIS_URL", "rediss://redis.internal:6380");
            env.set("MARKETS_FILE", storefront_domain::markets::DEMO_FILE);
        }
        CatalogConfig::from_env(&env)
            .map(|c| c.origin)
            .map_err(|e| e.var.to_string())
    }

    #[test]
    fn deployed_catalogs_need_redis() {
        let mut env = EnvReader::from_pairs([
            ("APP_ENV", "production"),
            ("CATALOG_FEED", "/data/shop.ndjson"),
            ("MARKETS_FILE", storefront_domain::markets::DEMO_FILE),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ]);
        let refused = CatalogConfig::from_env(&env)
            .map(|_| ())
            .map_err(|e| e.var.to_string());
        assert_eq!(refused, Err("REDIS_URL".into()));
        env.set("REDIS_URL", "rediss://redis.internal:6380");
        assert!(CatalogConfig::from_env(&env).is_ok());
    }

    #[test]
    fn production_never_generates_a_catalog() {
        assert_eq!(
            origin(&[]),
            Ok(Origin::Generated {
                size: 1000,
                seed: 42,
                media: None
            })
        );
        assert_eq!(origin(&[("APP_ENV", "production")]), Ok(Origin::Empty));
        assert_eq!(
            origin(&[("APP_ENV", "production"), ("CATALOG_SIZE", "1000")]),
            Err("CATALOG_SIZE".into())
        );
        assert_eq!(
            origin(&[
                ("APP_ENV", "staging"),
                ("CATALOG_FEED", "/data/shop.ndjson")
            ]),
            Ok(Origin::Feed(Source::File("/data/shop.ndjson".into())))
        );
        assert_eq!(
            origin(&[
                ("APP_ENV", "production"),
                ("CATALOG_FEED", "http://bucket/feed")
            ]),
            Err("CATALOG_FEED".into())
        );
        assert_eq!(
            origin(&[("CATALOG_FEED", "http://127.0.0.1:9/feed")]),
            Ok(Origin::Feed(Source::Url("http://127.0.0.1:9/feed".into())))
        );
    }
}
