//! The customers service's configuration.

use std::time::Duration;
use storefront_platform::store::RedisTarget;

use storefront_platform::env::{ConfigError, EnvReader, Secret};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology;

pub use crate::password::{Argon2Params, Concurrency};

pub const DEFAULT_RECAPTCHA_URL: &str = "https://www.google.com/recaptcha/api/siteverify";

#[derive(Debug, Clone)]
pub enum CaptchaConfig {
    /// Accepts any non-empty response; refused in production.
    Dev,
    Recaptcha {
        verify_url: String,
        secret: Secret,
        /// Hostnames the response must have been solved on (empty: any).
        hostnames: Vec<String>,
        /// For reCAPTCHA v3 responses, the lowest acceptable score.
        min_score: f64,
    },
}

#[derive(Debug, Clone)]
pub struct TokenConfig {
    pub issuer: String,
    pub audience: String,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    /// PKCS#8 PEM of the current ES256 key; None generates one (dev only).
    pub signing_key: Option<Secret>,
    /// PKCS#8 PEM of the previous key, still published during rotation.
    pub previous_key: Option<Secret>,
}

#[derive(Debug, Clone)]
pub struct CustomersConfig {
    pub service: ServiceSettings,
    pub redis: Option<RedisTarget>,
    pub tokens: TokenConfig,
    pub captcha: CaptchaConfig,
    pub argon2: Argon2Params,
    /// `ARGON2_MAX_CONCURRENT` (by default from the memory limit: half of it
    /// over one hash's memory; without a limit, twice the cores) and
    /// `ARGON2_QUEUE_MS` (2,000): hashes at once, and how long one waits for
    /// its turn before 503 `PASSWORD_CHECKS_BUSY`.
    pub hashing: Concurrency,
    /// `MAX_ADDRESSES` per customer.
    pub max_addresses: usize,
    /// The markets' currencies (`MARKETS_FILE`): what a preference may
    /// name, the first a new account's.
    pub currencies: std::sync::Arc<storefront_domain::currencies::Currencies>,
    /// `MAX_SESSIONS` per customer: a login beyond it ends the oldest.
    pub max_sessions: usize,
}

/// Hashes at once that fit half the container's memory limit (cgroup v2
/// `memory.max`, or v1's `memory.limit_in_bytes` on older nodes), each
/// taking `memory_kib`; without a limit, two per core.
fn derived_concurrency(memory_kib: u32) -> usize {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let limit = memory_limit(
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
    );
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    match limit {
        Some(bytes) => {
            let per_hash = u64::from(memory_kib) * 1024 + (1 << 20);
            ((bytes / 2) / per_hash).clamp(1, 256) as usize
        }
        None => 2 * cores,
    }
}

/// The container's memory limit from cgroup v2's `memory.max` (`max`: none)
/// or else v1's `memory.limit_in_bytes`, where no limit reads as a number
/// near 2^63.
fn memory_limit(v2: Option<String>, v1: Option<String>) -> Option<u64> {
    let parsed = |s: Option<String>| s.and_then(|s| s.trim().parse::<u64>().ok());
    match v2 {
        Some(v2) => parsed(Some(v2)),
        None => parsed(v1).filter(|bytes| *bytes < 1 << 60),
    }
}

fn captcha(env: &EnvReader) -> Result<CaptchaConfig, ConfigError> {
    match env.string("CAPTCHA_VERIFIER", "dev").as_str() {
        "dev" => Ok(CaptchaConfig::Dev),
        "recaptcha" => Ok(CaptchaConfig::Recaptcha {
            verify_url: env.url("RECAPTCHA_VERIFY_URL", DEFAULT_RECAPTCHA_URL)?,
            secret: env.required_secret("RECAPTCHA_SECRET")?,
            hostnames: env.list("RECAPTCHA_HOSTNAMES", ""),
            min_score: env.parse("RECAPTCHA_MIN_SCORE", 0.5)?,
        }),
        other => Err(ConfigError::new(
            "CAPTCHA_VERIFIER",
            format!("{other:?}: expected dev or recaptcha"),
        )),
    }
}

impl CustomersConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::CUSTOMERS, env)?;
        let tokens = TokenConfig {
            issuer: env.string("TOKEN_ISSUER", "storefront-customers"),
            audience: env.string("TOKEN_AUDIENCE", "storefront-bff"),
            access_ttl: Duration::from_secs(env.parse("ACCESS_TOKEN_TTL_SECS", 900)?),
            refresh_ttl: Duration::from_secs(env.parse("REFRESH_TOKEN_TTL_SECS", 30 * 86_400)?),
            signing_key: env.secret("TOKEN_SIGNING_KEY")?,
            previous_key: env.optional_secret("TOKEN_PREVIOUS_SIGNING_KEY")?,
        };
        let argon2 = Argon2Params {
            // OWASP's argon2id baseline: 19 MiB, 2 iterations, 1 lane.
            memory_kib: env.parse("ARGON2_MEMORY_KIB", 19_456)?,
            iterations: env.parse("ARGON2_ITERATIONS", 2)?,
            parallelism: env.parse("ARGON2_PARALLELISM", 1)?,
        };
        let derived = derived_concurrency(argon2.memory_kib);
        let hashing = Concurrency {
            at_once: env.parse("ARGON2_MAX_CONCURRENT", derived)?,
            wait: env.millis("ARGON2_QUEUE_MS", 2_000)?,
        };
        if hashing.at_once == 0 {
            return Err(ConfigError::new(
                "ARGON2_MAX_CONCURRENT",
                "must be at least 1",
            ));
        }
        let deployed = service.program.environment.refuses_dev_shortcuts();
        let mut config = Self {
            hashing,
            // Read once the dev shortcuts are refused, so they are reported first.
            redis: None,
            service,
            tokens,
            captcha: captcha(env)?,
            argon2,
            max_addresses: env.parse("MAX_ADDRESSES", 50)?,
            // Read once the dev shortcuts are refused, as Redis is.
            currencies: std::sync::Arc::new(storefront_domain::currencies::Currencies::demo()),
            max_sessions: env.parse("MAX_SESSIONS", 20)?,
        };
        config.validate()?;
        config.redis = env.redis(config.service.program.environment, "sessions and accounts")?;
        let currencies = storefront_domain::currencies::Currencies::from_setting(
            env.raw("MARKETS_FILE"),
            deployed,
        )
        .map_err(|m| ConfigError::new("MARKETS_FILE", m))?;
        config.currencies = std::sync::Arc::new(currencies);
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.max_addresses == 0 || self.max_sessions == 0 {
            return Err(ConfigError::new(
                "MAX_ADDRESSES",
                "MAX_ADDRESSES and MAX_SESSIONS must be above 0",
            ));
        }
        if !(30..=3600).contains(&self.tokens.access_ttl.as_secs()) {
            return Err(ConfigError::new(
                "ACCESS_TOKEN_TTL_SECS",
                "must be between 30 and 3600",
            ));
        }
        if self.tokens.refresh_ttl <= self.tokens.access_ttl {
            return Err(ConfigError::new(
                "REFRESH_TOKEN_TTL_SECS",
                "must be longer than the access token's",
            ));
        }
        if self.argon2.memory_kib < 8 * 1024
            || self.argon2.iterations == 0
            || self.argon2.parallelism == 0
        {
            return Err(ConfigError::new(
                "ARGON2_MEMORY_KIB",
                "argon2id needs at least 8 MiB, 1 iteration, 1 lane",
            ));
        }
        if let CaptchaConfig::Recaptcha { min_score, .. } = self.captcha
            && !(0.0..=1.0).contains(&min_score)
        {
            return Err(ConfigError::new(
                "RECAPTCHA_MIN_SCORE",
                "must be between 0 and 1",
            ));
        }
        if self.service.program.environment.refuses_dev_shortcuts() {
            if matches!(self.captcha, CaptchaConfig::Dev) {
                return Err(ConfigError::new(
                    "CAPTCHA_VERIFIER",
                    "the dev captcha is refused in production and staging",
                ));
            }
            if self.tokens.signing_key.is_none() {
                return Err(ConfigError::new(
                    "TOKEN_SIGNING_KEY",
                    "production and staging need a configured signing key",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_limit_is_read_from_cgroup_v2_or_v1() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(memory_limit(some("536870912\n"), None), Some(536_870_912));
        assert_eq!(
            memory_limit(some("max\n"), some("536870912")),
            None,
            "v2 says none"
        );
        assert_eq!(memory_limit(None, some("268435456\n")), Some(268_435_456));
        assert_eq!(
            memory_limit(None, some("9223372036854771712")),
            None,
            "v1 unlimited"
        );
        assert_eq!(memory_limit(None, None), None);
    }

    #[test]
    fn staging_refuses_the_dev_captcha_like_production() {
        let env = EnvReader::from_pairs([
            ("APP_ENV", "staging"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ]);
        assert_eq!(
            CustomersConfig::from_env(&env).unwrap_err().var,
            "CAPTCHA_VERIFIER"
        );
        let dev = EnvReader::from_pairs([("APP_ENV", "staging")]);
        assert_eq!(
            CustomersConfig::from_env(&dev).unwrap_err().var,
            "IDENTITY_ISSUER",
            "nor the dev identity issuer"
        );
    }

    #[test]
    fn production_refuses_dev_shortcuts() {
        let base = [
            ("APP_ENV", "production"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ];
        let err = CustomersConfig::from_env(&EnvReader::from_pairs(base)).unwrap_err();
        assert_eq!(err.var, "CAPTCHA_VERIFIER");
        let mut env = EnvReader::from_pairs(base);
        env.set("CAPTCHA_VERIFIER", "recaptcha");
        env.set("RECAPTCHA_SECRET", "s3cret");
        assert_eq!(
            CustomersConfig::from_env(&env).unwrap_err().var,
            "TOKEN_SIGNING_KEY"
        );
        env.set("TOKEN_SIGNING_KEY", "-----BEGIN PRIVATE KEY-----");
        assert_eq!(
            CustomersConfig::from_env(&env).unwrap_err().var,
            "REDIS_URL"
        );
        env.set("REDIS_URL", "redis://redis:6379/");
        assert_eq!(
            CustomersConfig::from_env(&env).unwrap_err().var,
            "MARKETS_FILE"
        );
        env.set("MARKETS_FILE", storefront_domain::markets::DEMO_FILE);
        let config = CustomersConfig::from_env(&env).unwrap();
        assert!(
            !format!("{config:?}").contains("s3cret"),
            "secrets never print"
        );
    }

    #[test]
    fn recaptcha_needs_its_secret() {
        let env = EnvReader::from_pairs([("CAPTCHA_VERIFIER", "recaptcha")]);
        assert_eq!(
            CustomersConfig::from_env(&env).unwrap_err().var,
            "RECAPTCHA_SECRET"
        );
    }
}
