//! The orders service's configuration.

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::store::RedisTarget;
use storefront_platform::topology;

#[derive(Debug, Clone)]
pub struct OrdersConfig {
    pub service: ServiceSettings,
    pub redis: Option<RedisTarget>,
}

impl OrdersConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::ORDERS, env)?;
        let redis = env.redis(service.program.environment, "orders")?;
        Ok(Self { service, redis })
    }
}
