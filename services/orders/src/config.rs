//! The orders service's configuration.

use storefront_common::env::{ConfigError, EnvReader};
use storefront_common::settings::ServiceSettings;

pub const SERVICE_NAME: &str = "orders";
pub const DEFAULT_ADDR: &str = "127.0.0.1:50054";

#[derive(Debug, Clone)]
pub struct OrdersConfig {
    pub service: ServiceSettings,
    pub redis_url: Option<String>,
}

impl OrdersConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(SERVICE_NAME, env, DEFAULT_ADDR)?;
        let redis_url = env.redis_url(service.environment, "orders")?;
        Ok(Self { service, redis_url })
    }
}
