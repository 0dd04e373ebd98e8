//! The cart service's configuration.

use std::time::Duration;
use storefront_platform::store::RedisTarget;

use crate::hold_limits::{HoldLimit, HoldLimits};

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::identity::token_source::TokenOrigin;
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology::{self, PeerConfig};

/// `CART_MERGE_STRATEGY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The guest's lines into the customer's latest active cart of the
    /// same currency (a new cart if none).
    MergeLines,
    /// The guest's cart becomes a new cart of the customer's; their other
    /// carts are left as they are.
    KeepGuestCart,
}

#[derive(Debug, Clone)]
pub struct CartConfig {
    pub service: ServiceSettings,
    pub redis: Option<RedisTarget>,
    /// `CATALOG_URL`/`CATALOG_AUDIENCE`, `ORDERS_URL`/`ORDERS_AUDIENCE`,
    /// `PAYMENTS_URL`/`PAYMENTS_AUDIENCE`.
    pub catalog: PeerConfig,
    pub orders: PeerConfig,
    pub payments: PeerConfig,
    /// `IDENTITY_TOKEN_DIR` or `IDENTITY_TOKEN_URL`: where the cart service
    /// gets its identity tokens.
    pub identity_tokens: TokenOrigin,
    /// `CHECKOUT_TTL_SECS` (900): how long a checkout session stays open
    /// and holds its stock.
    pub checkout_ttl: Duration,
    /// `CHECKOUT_TTL_GUEST_SECS` (600, at most `CHECKOUT_TTL_SECS`): a
    /// guest's session and hold.
    pub checkout_ttl_guest: Duration,
    /// `HOLD_LIMIT_*`: units a guest, a customer and a client network may
    /// hold in open checkouts.
    pub hold_limits: HoldLimits,
    pub grpc_timeout: Duration,
    pub limits: CartLimits,
    /// Where the promotions come from when the shared store has none yet.
    pub promotions: PromotionsSource,
    /// `MARKETS_FILE` (docs/markets.md).
    pub markets: storefront_domain::markets::Source,
    /// `CART_PRODUCT_CACHE_MS` (1,000; 0 turns it off, at most 60,000): how
    /// long a product the catalog gave is reused to price a line added or
    /// changed. Checkout always asks the catalog afresh and reprices.
    pub product_cache: Duration,
    /// `CART_MERGE_STRATEGY` (`merge`, or `keep-guest`): what a login with
    /// a guest token does with the guest's cart.
    pub merge: Strategy,
}

/// `PROMOTIONS_FILE`, or the demo set (local and development only), or
/// none (production and staging without a file: until one is set on the
/// internal port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromotionsSource {
    File(std::path::PathBuf),
    Demo,
    None,
}

/// What one customer's carts may hold.
#[derive(Debug, Clone, Copy)]
pub struct CartLimits {
    /// `CART_IDLE_TTL_SECS`: a cart unchanged this long is gone.
    pub idle_ttl: Duration,
    /// `MAX_ACTIVE_CARTS` per customer.
    pub active_carts: usize,
    /// `MAX_CART_LINES`: distinct lines per cart.
    pub lines: usize,
}

impl Default for CartLimits {
    fn default() -> Self {
        Self {
            idle_ttl: Duration::from_secs(30 * 86_400),
            active_carts: 20,
            lines: 100,
        }
    }
}

/// `HOLD_LIMIT_*`, each above 0; per variant at most the total;
/// `HOLD_LIMIT_PAID_MULTIPLE` from 1 (past a limit, refused) to 100.
fn hold_limits(env: &EnvReader) -> Result<HoldLimits, ConfigError> {
    let d = HoldLimits::default();
    let limit = |suffix: &str, default: HoldLimit| -> Result<HoldLimit, ConfigError> {
        let per_variant_name = format!("HOLD_LIMIT_PER_VARIANT{suffix}");
        let total_name = format!("HOLD_LIMIT_TOTAL{suffix}");
        let per_variant: u32 = env.parse(&per_variant_name, default.per_variant)?;
        let total: u32 = env.parse(&total_name, default.total)?;
        if per_variant == 0 || total == 0 || per_variant > total {
            return Err(ConfigError::new(
                total_name,
                "hold limits must be above 0, per variant at most the total",
            ));
        }
        Ok(HoldLimit { per_variant, total })
    };
    Ok(HoldLimits {
        guest: limit("", d.guest)?,
        customer: limit("_CUSTOMER", d.customer)?,
        network: limit("_NETWORK", d.network)?,
        paid_multiple: match env.parse("HOLD_LIMIT_PAID_MULTIPLE", d.paid_multiple)? {
            m @ 1..=100 => m,
            _ => {
                return Err(ConfigError::new(
                    "HOLD_LIMIT_PAID_MULTIPLE",
                    "must be 1 (no hold past a limit) to 100",
                ));
            }
        },
    })
}

impl CartConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::CART, env)?;
        let dev_token_url = topology::CART.dev_token_url(&topology::DEV_ISSUER.local_url());
        let config = Self {
            catalog: topology::CATALOG.peer_config(env)?,
            orders: topology::ORDERS.peer_config(env)?,
            payments: topology::PAYMENTS.peer_config(env)?,
            identity_tokens: env.identity_tokens(service.program.environment, &dev_token_url)?,
            redis: env.redis(service.program.environment, "carts")?,
            checkout_ttl: Duration::from_secs(env.parse("CHECKOUT_TTL_SECS", 900)?),
            checkout_ttl_guest: Duration::from_secs(env.parse(
                "CHECKOUT_TTL_GUEST_SECS",
                env.parse("CHECKOUT_TTL_SECS", 900u64)?.min(600),
            )?),
            hold_limits: hold_limits(env)?,
            grpc_timeout: env.millis("GRPC_TIMEOUT_MS", 5_000)?,
            limits: CartLimits {
                idle_ttl: Duration::from_secs(env.parse("CART_IDLE_TTL_SECS", 30 * 86_400)?),
                active_carts: env.parse("MAX_ACTIVE_CARTS", 20)?,
                lines: env.parse("MAX_CART_LINES", 100)?,
            },
            product_cache: env.millis("CART_PRODUCT_CACHE_MS", 1_000)?,
            merge: match env.string("CART_MERGE_STRATEGY", "merge").as_str() {
                "merge" => Strategy::MergeLines,
                "keep-guest" => Strategy::KeepGuestCart,
                _ => {
                    return Err(ConfigError::new(
                        "CART_MERGE_STRATEGY",
                        "must be merge or keep-guest",
                    ));
                }
            },
            promotions: match env.raw("PROMOTIONS_FILE").filter(|f| !f.trim().is_empty()) {
                Some(file) => PromotionsSource::File(file.trim().into()),
                None if service.program.environment.refuses_dev_shortcuts() => {
                    PromotionsSource::None
                }
                None => PromotionsSource::Demo,
            },
            markets: storefront_domain::markets::Source::from_setting(
                env.raw("MARKETS_FILE"),
                service.program.environment.refuses_dev_shortcuts(),
            )
            .map_err(|m| ConfigError::new("MARKETS_FILE", m))?,
            service,
        };
        let l = config.limits;
        if l.idle_ttl.as_secs() < 60 || l.active_carts == 0 || l.lines == 0 {
            return Err(ConfigError::new(
                "CART_IDLE_TTL_SECS",
                "carts need an idle TTL of at least 60 s, MAX_ACTIVE_CARTS and MAX_CART_LINES above 0",
            ));
        }
        if config.product_cache > Duration::from_secs(60) {
            return Err(ConfigError::new(
                "CART_PRODUCT_CACHE_MS",
                "at most 60000: a line is priced from a product at most this old",
            ));
        }
        if config.checkout_ttl.is_zero() {
            return Err(ConfigError::new(
                "CHECKOUT_TTL_SECS",
                "must be greater than 0",
            ));
        }
        if config.checkout_ttl_guest.is_zero() || config.checkout_ttl_guest > config.checkout_ttl {
            return Err(ConfigError::new(
                "CHECKOUT_TTL_GUEST_SECS",
                "must be greater than 0 and at most CHECKOUT_TTL_SECS",
            ));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployed(pairs: &[(&str, &str)]) -> EnvReader {
        let mut env = EnvReader::from_pairs(pairs.iter().copied());
        if env.raw("APP_ENV").is_some_and(|e| e != "local") {
            env.set("IDENTITY_ISSUER", "https://accounts.google.com");
            env.set(
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            );
            env.set(
                "IDENTITY_TOKEN_URL",
                "http://metadata.google.internal/token",
            );
            env.set("REDIS_URL", "rediss://redis.internal:6380");
        }
        env
    }

    fn promotions(pairs: &[(&str, &str)]) -> PromotionsSource {
        let mut env = deployed(pairs);
        if env.raw("APP_ENV").is_some_and(|e| e != "local") {
            env.set("MARKETS_FILE", storefront_domain::markets::DEMO_FILE);
        }
        CartConfig::from_env(&env).unwrap().promotions
    }

    #[test]
    fn deployed_shops_name_their_markets() {
        use storefront_domain::markets::Source;
        let local = CartConfig::from_env(&deployed(&[])).map(|c| c.markets);
        assert_eq!(local.ok(), Some(Source::Demo));
        for environment in ["production", "staging"] {
            let refused = CartConfig::from_env(&deployed(&[("APP_ENV", environment)]));
            assert_eq!(refused.err().map(|e| e.var), Some("MARKETS_FILE".into()));
        }
    }

    #[test]
    fn deployed_shops_never_run_the_demo_promotions() {
        assert_eq!(promotions(&[]), PromotionsSource::Demo);
        let production = [("APP_ENV", "production")];
        assert_eq!(promotions(&production), PromotionsSource::None);
        assert_eq!(
            promotions(&[
                ("APP_ENV", "staging"),
                ("PROMOTIONS_FILE", "/data/promotions.json")
            ]),
            PromotionsSource::File("/data/promotions.json".into())
        );
    }

    #[test]
    fn a_paid_multiple_is_one_to_a_hundred() {
        let multiple = |m: &str| {
            CartConfig::from_env(&deployed(&[("HOLD_LIMIT_PAID_MULTIPLE", m)]))
                .map(|c| c.hold_limits.paid_multiple)
                .map_err(|e| e.var)
        };
        assert_eq!(multiple("1"), Ok(1));
        assert_eq!(multiple("100"), Ok(100));
        for refused in ["0", "101", "x"] {
            assert_eq!(multiple(refused), Err("HOLD_LIMIT_PAID_MULTIPLE".into()));
        }
        let default = CartConfig::from_env(&deployed(&[])).map(|c| c.hold_limits.paid_multiple);
        assert_eq!(default.ok(), Some(5));
    }
}
