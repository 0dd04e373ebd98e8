//! The catalog service's configuration.

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology;

/// The demo catalog size of the embedded default (at least 1,000).
pub const DEFAULT_SIZE: usize = 1_000;
pub const MAX_SIZE: usize = 1_000_000;

#[derive(Debug, Clone)]
pub struct CatalogConfig {
    pub service: ServiceSettings,
    /// `CATALOG_SIZE`: how many demo products to generate.
    pub size: usize,
    /// `CATALOG_SEED`: the generator seed.
    pub seed: u64,
}

impl CatalogConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::CATALOG, env)?;
        let size = env.parse("CATALOG_SIZE", DEFAULT_SIZE)?;
        if !(1..=MAX_SIZE).contains(&size) {
            return Err(ConfigError::new(
                "CATALOG_SIZE",
                format!("must be between 1 and {MAX_SIZE}"),
            ));
        }
        Ok(Self {
            service,
            size,
            seed: env.parse("CATALOG_SEED", 42)?,
        })
    }
}
