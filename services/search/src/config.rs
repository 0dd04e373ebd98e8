//! The search service's configuration.

use std::sync::Arc;
use std::time::Duration;

use storefront_domain::currencies::Currencies;

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::identity::token_source::TokenOrigin;
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology::{self, PeerConfig};

/// Synonym groups: `;` between groups, `,` between words or phrases.
pub const DEFAULT_SYNONYMS: &str = "tee,t-shirt,tshirt;sneaker,trainer,runner,running shoes;trousers,pants,slacks;scarf,shawl;mug,cup;throw,blanket";

#[derive(Debug, Clone)]
pub struct SearchConfig {
    pub service: ServiceSettings,
    /// `CATALOG_URL`, `CATALOG_AUDIENCE`.
    pub catalog: PeerConfig,
    pub identity_tokens: TokenOrigin,
    /// `SEARCH_FOLLOW_MS`: how often the catalog is asked what changed.
    pub follow: Duration,
    /// `SEARCH_SYNONYMS`.
    pub synonyms: Vec<Vec<String>>,
    /// `SEARCH_INLINE_POSTINGS`: a search reading more postings than this
    /// (an estimate) runs on the blocking pool, others on the request's
    /// task, both under the pool's permits (0: every search on the pool).
    pub inline_postings: u64,
    pub grpc_timeout: Duration,
    /// The markets' currencies (`MARKETS_FILE`): a price index and price
    /// facets for each.
    pub currencies: Arc<Currencies>,
}

impl SearchConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::SEARCH, env)?;
        let dev_token_url = topology::SEARCH.dev_token_url(&topology::DEV_ISSUER.local_url());
        let deployed = service.program.environment.refuses_dev_shortcuts();
        let synonyms = env
            .string("SEARCH_SYNONYMS", DEFAULT_SYNONYMS)
            .split(';')
            .map(|group| {
                group
                    .split(',')
                    .map(|w| w.trim().to_lowercase())
                    .filter(|w| !w.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|group| group.len() > 1)
            .collect();
        let config = Self {
            catalog: topology::CATALOG.peer_config(env)?,
            identity_tokens: env.identity_tokens(service.program.environment, &dev_token_url)?,
            follow: env.millis("SEARCH_FOLLOW_MS", 500)?,
            synonyms,
            inline_postings: env.parse("SEARCH_INLINE_POSTINGS", 200_000)?,
            grpc_timeout: env.millis("GRPC_TIMEOUT_MS", 30_000)?,
            currencies: Arc::new(
                Currencies::from_setting(env.raw("MARKETS_FILE"), deployed)
                    .map_err(|m| ConfigError::new("MARKETS_FILE", m))?,
            ),
            service,
        };
        if config.follow.is_zero() || config.follow > Duration::from_secs(1) {
            return Err(ConfigError::new(
                "SEARCH_FOLLOW_MS",
                "must be 1 to 1000: search follows a change within 2 s",
            ));
        }
        Ok(config)
    }
}
