//! The payments program's configuration: which provider takes the money,
//! and its secrets (only this program's environment holds them).

use storefront_platform::env::{ConfigError, EnvReader, Secret};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology;

/// The test provider's webhook secret where none is set: it signs only
/// test payments, which production and staging refuse.
pub const DEV_TEST_WEBHOOK_SECRET: &str = "whsec_storefront_test";

#[derive(Debug, Clone)]
pub enum ProviderConfig {
    /// `PAYMENT_PROVIDER=test`: in memory, Stripe's test methods.
    Test {
        /// `PAYMENTS_TEST_WEBHOOK_SECRET`.
        webhook_secret: Secret,
        /// `PAYMENTS_WEBHOOK_URL`: where its signed deliveries are posted
        /// (the gateway's `/webhooks/payments/test`); unset, kept.
        deliver_to: Option<String>,
    },
    /// `PAYMENT_PROVIDER=stripe`.
    Stripe {
        /// `STRIPE_API_BASE`, by default Stripe's.
        api_base: String,
        /// `STRIPE_SECRET_KEY`.
        secret_key: Secret,
        /// `STRIPE_WEBHOOK_SECRET`.
        webhook_secret: Secret,
    },
}

#[derive(Debug, Clone)]
pub struct PaymentsConfig {
    pub service: ServiceSettings,
    pub provider: ProviderConfig,
}

impl PaymentsConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::PAYMENTS, env)?;
        let strict = service.program.environment.refuses_dev_shortcuts();
        let provider = match env.string("PAYMENT_PROVIDER", "test").as_str() {
            "test" if strict => {
                return Err(ConfigError::new(
                    "PAYMENT_PROVIDER",
                    "the test provider is refused in production and staging (it takes no money)",
                ));
            }
            "test" => ProviderConfig::Test {
                webhook_secret: Secret::new(
                    env.string("PAYMENTS_TEST_WEBHOOK_SECRET", DEV_TEST_WEBHOOK_SECRET),
                ),
                deliver_to: env
                    .raw("PAYMENTS_WEBHOOK_URL")
                    .map(|_| env.url("PAYMENTS_WEBHOOK_URL", ""))
                    .transpose()?,
            },
            "stripe" => {
                let api_base = env.url("STRIPE_API_BASE", crate::stripe::API_BASE)?;
                if strict && !api_base.starts_with("https://") {
                    return Err(ConfigError::new(
                        "STRIPE_API_BASE",
                        "production and staging call Stripe over https",
                    ));
                }
                ProviderConfig::Stripe {
                    api_base,
                    secret_key: env.required_secret("STRIPE_SECRET_KEY")?,
                    webhook_secret: env.required_secret("STRIPE_WEBHOOK_SECRET")?,
                }
            }
            other => {
                let shown: String = other.chars().take(32).collect();
                return Err(ConfigError::new(
                    "PAYMENT_PROVIDER",
                    format!("{shown:?} is not a provider: test or stripe"),
                ));
            }
        };
        Ok(Self { service, provider })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn production() -> EnvReader {
        EnvReader::from_pairs([
            ("APP_ENV", "production"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ])
    }

    #[test]
    fn production_refuses_the_test_provider_and_stripe_needs_its_secrets() {
        let mut env = production();
        assert_eq!(
            PaymentsConfig::from_env(&env).unwrap_err().var,
            "PAYMENT_PROVIDER"
        );
        env.set("PAYMENT_PROVIDER", "stripe");
        assert_eq!(
            PaymentsConfig::from_env(&env).unwrap_err().var,
            "STRIPE_SECRET_KEY"
        );
        env.set("STRIPE_SECRET_KEY", "sk_live_x");
        assert_eq!(
            PaymentsConfig::from_env(&env).unwrap_err().var,
            "STRIPE_WEBHOOK_SECRET"
        );
        env.set("STRIPE_WEBHOOK_SECRET", "whsec_x");
        let config = PaymentsConfig::from_env(&env).expect("stripe configured");
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk_live_x") && !shown.contains("whsec_x"));
        env.set("STRIPE_API_BASE", "http://localhost:8420");
        assert_eq!(
            PaymentsConfig::from_env(&env).unwrap_err().var,
            "STRIPE_API_BASE"
        );
        env.set("PAYMENT_PROVIDER", "paypal");
        assert_eq!(
            PaymentsConfig::from_env(&env).unwrap_err().var,
            "PAYMENT_PROVIDER"
        );
    }

    #[test]
    fn locally_the_test_provider_is_the_default() {
        let config = PaymentsConfig::from_env(&EnvReader::default()).expect("configured");
        assert!(matches!(config.provider, ProviderConfig::Test { .. }));
    }
}
