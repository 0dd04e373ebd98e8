//! The orders service's configuration.

use std::time::Duration;

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::identity::token_source::TokenOrigin;
use storefront_platform::settings::ServiceSettings;
use storefront_platform::store::RedisTarget;
use storefront_platform::topology::{self, PeerConfig};

use crate::payment::CaptureAt;

#[derive(Debug, Clone)]
pub struct OrdersConfig {
    pub service: ServiceSettings,
    pub redis: Option<RedisTarget>,
    /// `CATALOG_URL`/`CATALOG_AUDIENCE`: where a cancelled order's stock goes back.
    pub catalog: PeerConfig,
    /// `PAYMENTS_URL`/`PAYMENTS_AUDIENCE`: where an order's payment moves.
    pub payments: PeerConfig,
    /// `PAYMENT_CAPTURE`: `on_ship` (the default) or `on_confirm`.
    pub capture: CaptureAt,
    /// `IDENTITY_TOKEN_DIR` or `IDENTITY_TOKEN_URL`: where the orders service
    /// gets its identity tokens.
    pub identity_tokens: TokenOrigin,
    pub grpc_timeout: Duration,
    /// `ORDER_WEBHOOK_URLS`, `ORDER_WEBHOOK_SECRET`,
    /// `ORDER_WEBHOOK_FIRST_RETRY_MS`: where order events are delivered.
    pub webhooks: Option<crate::webhooks::Settings>,
}

impl OrdersConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::ORDERS, env)?;
        let redis = env.redis(service.program.environment, "orders")?;
        let dev_token_url = topology::ORDERS.dev_token_url(&topology::DEV_ISSUER.local_url());
        let capture = env.string("PAYMENT_CAPTURE", "on_ship");
        let capture = CaptureAt::parse(&capture).ok_or_else(|| {
            ConfigError::new("PAYMENT_CAPTURE", "on_ship (the default) or on_confirm")
        })?;
        Ok(Self {
            catalog: topology::CATALOG.peer_config(env)?,
            payments: topology::PAYMENTS.peer_config(env)?,
            capture,
            identity_tokens: env.identity_tokens(service.program.environment, &dev_token_url)?,
            grpc_timeout: env.millis("GRPC_TIMEOUT_MS", 5_000)?,
            webhooks: crate::webhooks::Settings::from_env(
                env,
                service.program.environment.refuses_dev_shortcuts(),
            )?,
            redis,
            service,
        })
    }
}
