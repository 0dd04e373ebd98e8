//! The search service's configuration.

use std::time::Duration;

use storefront_common::env::{ConfigError, EnvReader};
use storefront_common::identity::dev_issuer::account_url;
use storefront_common::settings::ServiceSettings;

pub const SERVICE_NAME: &str = "search";
pub const DEFAULT_ADDR: &str = "127.0.0.1:50055";
/// The search service's own account, as it reads the catalog.
pub const DEV_SEARCH_ACCOUNT: &str = "search@storefront.iam.gserviceaccount.com";
/// The catalog methods search calls: what the catalog's allow-list grants
/// its account.
pub const CALLS_ON_CATALOG: &str = "GetCatalogInfo|ListCategories|ExportProducts";
/// Synonym groups: `;` between groups, `,` between words or phrases.
pub const DEFAULT_SYNONYMS: &str = "tee,t-shirt,tshirt;sneaker,trainer,runner;trousers,pants,slacks;scarf,shawl;mug,cup;throw,blanket";

#[derive(Debug, Clone)]
pub struct SearchConfig {
    pub service: ServiceSettings,
    /// `CATALOG_URL`, `CATALOG_AUDIENCE`.
    pub catalog: (String, String),
    pub identity_token_url: String,
    /// `SEARCH_REFRESH_SECS`: how often the catalog version is checked.
    pub refresh: Duration,
    /// `SEARCH_SYNONYMS`.
    pub synonyms: Vec<Vec<String>>,
    pub grpc_timeout: Duration,
}

impl SearchConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(SERVICE_NAME, env, DEFAULT_ADDR)?;
        let dev_token_url = account_url("http://127.0.0.1:8091", DEV_SEARCH_ACCOUNT);
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
            catalog: (
                env.url("CATALOG_URL", "http://127.0.0.1:50051")?,
                env.string("CATALOG_AUDIENCE", "catalog"),
            ),
            identity_token_url: env.identity_token_url(service.environment, &dev_token_url)?,
            refresh: Duration::from_secs(env.parse("SEARCH_REFRESH_SECS", 30)?),
            synonyms,
            grpc_timeout: env.millis("GRPC_TIMEOUT_MS", 30_000)?,
            service,
        };
        if config.refresh.is_zero() {
            return Err(ConfigError::new(
                "SEARCH_REFRESH_SECS",
                "must be greater than 0",
            ));
        }
        Ok(config)
    }
}
