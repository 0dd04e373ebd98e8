//! Every setting the programs read, by name, so that a misspelt one is
//! caught at start rather than silently left at its default
//! (`REDIS_ULR is not a setting; did you mean REDIS_URL?`): a name in the
//! environment is reported when it starts with one of the settings'
//! prefixes (`CATALOG_`, `RATE_LIMIT_`...) or is within two edits of a
//! setting, and is not a setting itself. Production and staging refuse to
//! start on one; elsewhere it is a warning. The list is of every program
//! (a program is often given the environment of all), and a test holds it
//! to what the programs read.

use std::collections::BTreeSet;
use std::fmt;

use crate::env::{AppEnvironment, ConfigError, EnvReader};

/// Every setting of every program, sorted.
pub const SETTINGS: &[&str] = &[
    "ACCESS_TOKEN_TTL_SECS",
    "ACP_AGENTS",
    "ACP_BASE_URL",
    "ACP_ORDER_URL",
    "ACP_PRODUCT_URL",
    "ALLOWED_CALLERS",
    "APP_ENV",
    "ARGON2_ITERATIONS",
    "ARGON2_MAX_CONCURRENT",
    "ARGON2_MEMORY_KIB",
    "ARGON2_PARALLELISM",
    "ARGON2_QUEUE_MS",
    "BREAKER_OPEN_MS",
    "BREAKER_THRESHOLD",
    "CACHE_CATALOG",
    "CACHE_CONTENT",
    "CACHE_SEARCH",
    "CAPTCHA_VERIFIER",
    "CART_AUDIENCE",
    "CART_IDLE_TTL_SECS",
    "CART_MERGE_STRATEGY",
    "CART_PRODUCT_CACHE_MS",
    "CART_URL",
    "CATALOG_AUDIENCE",
    "CATALOG_FEED",
    "CATALOG_IMPORT_MAX_BYTES",
    "CATALOG_MAX_CATEGORY_DEPTH",
    "CATALOG_SEED",
    "CATALOG_SIZE",
    "CATALOG_URL",
    "CHECKOUT_TTL_GUEST_SECS",
    "CHECKOUT_TTL_SECS",
    "CONTENT_AUDIENCE",
    "CONTENT_DIR",
    "CONTENT_FALLBACKS",
    "CONTENT_URL",
    "CONTENT_WATCH_SECS",
    "CORS_ALLOWED_ORIGINS",
    "CORS_MAX_AGE_SECS",
    "CUSTOMERS_AUDIENCE",
    "CUSTOMERS_URL",
    "DEMO_MEDIA_BASE",
    "DEV_ISSUER_URL",
    "DEV_TOKEN_TTL_SECS",
    "DOWNSTREAM_CONCURRENCY",
    "DRAIN_TIMEOUT_MS",
    "GRPC_MAX_CONNECTION_AGE_SECS",
    "GRPC_REFLECTION",
    "GRPC_TIMEOUT_MS",
    "HOLD_LIMIT_PAID_MULTIPLE",
    "HOLD_LIMIT_PER_VARIANT",
    "HOLD_LIMIT_PER_VARIANT_CUSTOMER",
    "HOLD_LIMIT_PER_VARIANT_NETWORK",
    "HOLD_LIMIT_TOTAL",
    "HOLD_LIMIT_TOTAL_CUSTOMER",
    "HOLD_LIMIT_TOTAL_NETWORK",
    "IDEMPOTENCY_MAX_BYTES",
    "IDEMPOTENCY_MAX_BYTES_NETWORK",
    "IDEMPOTENCY_MAX_KEYS",
    "IDEMPOTENCY_MAX_KEYS_NETWORK",
    "IDEMPOTENCY_TTL_SECS",
    "IDENTITY_AUDIENCE",
    "IDENTITY_ISSUER",
    "IDENTITY_JWKS_CA_FILE",
    "IDENTITY_JWKS_URL",
    "IDENTITY_TOKEN_DIR",
    "IDENTITY_TOKEN_URL",
    "INTERNAL_AUDIENCE",
    "INTERNAL_CALLERS",
    "INTERNAL_LISTEN_ADDR",
    "LISTEN_ADDR",
    "MARKETS_FILE",
    "MAX_ACTIVE_CARTS",
    "MAX_ADDRESSES",
    "MAX_CART_LINES",
    "MAX_SESSIONS",
    "METRICS_LISTEN_ADDR",
    "MIMALLOC_PURGE_DELAY",
    "OPENAPI_CONTACT_EMAIL",
    "OPENAPI_CONTACT_NAME",
    "OPENAPI_CONTACT_URL",
    "OPENAPI_LICENSE_NAME",
    "OPENAPI_LICENSE_URL",
    "OPENAPI_SERVERS",
    "ORDERS_AUDIENCE",
    "ORDERS_URL",
    "ORDER_WEBHOOK_FIRST_RETRY_MS",
    "ORDER_WEBHOOK_SECRET",
    "ORDER_WEBHOOK_SECRET_FILE",
    "ORDER_WEBHOOK_URLS",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "PAYMENTS_AUDIENCE",
    "PAYMENTS_TEST_WEBHOOK_SECRET",
    "PAYMENTS_URL",
    "PAYMENTS_WEBHOOK_URL",
    "PAYMENT_CAPTURE",
    "PAYMENT_PROVIDER",
    "PRODUCT_JSON_CACHE_MB",
    "PROMOTIONS_FILE",
    "RATE_LIMIT_AGENT",
    "RATE_LIMIT_CHECKOUT",
    "RATE_LIMIT_CHECKOUT_SESSION",
    "RATE_LIMIT_FAIL_CLOSED",
    "RATE_LIMIT_GUEST",
    "RATE_LIMIT_IP",
    "RATE_LIMIT_LOGIN",
    "RATE_LIMIT_LOGIN_ACCOUNT",
    "RATE_LIMIT_LOGIN_EMAIL",
    "RATE_LIMIT_MAINTENANCE",
    "RATE_LIMIT_PASSWORD_CHANGE",
    "RATE_LIMIT_SEARCH",
    "RATE_LIMIT_SERVICE",
    "RATE_LIMIT_SESSION",
    "RATE_LIMIT_SIGNUP",
    "RECAPTCHA_HOSTNAMES",
    "RECAPTCHA_MIN_SCORE",
    "RECAPTCHA_SECRET",
    "RECAPTCHA_SECRET_FILE",
    "RECAPTCHA_VERIFY_URL",
    "REDIS_CA_FILE",
    "REDIS_CLUSTER_NODES",
    "REDIS_CLUSTER_NODES_FILE",
    "REDIS_URL",
    "REDIS_URL_FILE",
    "REFRESH_TOKEN_TTL_SECS",
    "ROUTE_TIMEOUTS",
    "RUST_LOG",
    "SEARCH_AUDIENCE",
    "SEARCH_FOLLOW_MS",
    "SEARCH_INLINE_POSTINGS",
    "SEARCH_SYNONYMS",
    "SEARCH_URL",
    "SECRETS_WATCH_SECS",
    "SHUTDOWN_DELAY_MS",
    "STRIPE_API_BASE",
    "STRIPE_SECRET_KEY",
    "STRIPE_SECRET_KEY_FILE",
    "STRIPE_WEBHOOK_SECRET",
    "STRIPE_WEBHOOK_SECRET_FILE",
    "TOKEN_AUDIENCE",
    "TOKEN_ISSUER",
    "TOKEN_PREVIOUS_SIGNING_KEY",
    "TOKEN_PREVIOUS_SIGNING_KEY_FILE",
    "TOKEN_SIGNING_KEY",
    "TOKEN_SIGNING_KEY_FILE",
    "TRUSTED_PROXIES",
];

/// Namespaces that libraries read on their own (OpenTelemetry's SDK reads
/// many `OTEL_*` we never name, the allocator its `MIMALLOC_*`): only a
/// name near one of ours is reported.
const LIBRARY_PREFIXES: &[&str] = &["MIMALLOC_", "OTEL_", "RUST_"];

/// A name in the environment that is not a setting, and the setting it
/// is likely a misspelling of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    pub name: String,
    pub nearest: Option<&'static str>,
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is not a setting", self.name)?;
        if let Some(nearest) = self.nearest {
            write!(f, "; did you mean {nearest}?")?;
        }
        Ok(())
    }
}

/// The settings' prefixes: a first word that two or more settings share.
fn prefixes() -> BTreeSet<&'static str> {
    let mut seen = BTreeSet::new();
    let mut shared = BTreeSet::new();
    for name in SETTINGS {
        let Some((first, _)) = name.split_once('_') else {
            continue;
        };
        let prefix = &name[..=first.len()];
        if !seen.insert(prefix) {
            shared.insert(prefix);
        }
    }
    for library in LIBRARY_PREFIXES {
        shared.remove(library);
    }
    shared
}

/// What Kubernetes sets for each Service of the namespace
/// (`CATALOG_SERVICE_HOST`, `CATALOG_PORT_50051_TCP_ADDR`...).
fn is_service_link(name: &str) -> bool {
    name.contains("_SERVICE_HOST")
        || name.contains("_SERVICE_PORT")
        || name.ends_with("_PORT")
        || name
            .split_once("_PORT_")
            .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The setting `name` is most likely a misspelling of: two edits or fewer.
fn nearest(name: &str) -> Option<&'static str> {
    SETTINGS
        .iter()
        .map(|s| (strsim::levenshtein(name, s), *s))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, s)| s)
}

/// The names of `env` that look like settings and are not, sorted.
pub fn unknown(env: &EnvReader) -> Vec<Unknown> {
    let prefixes = prefixes();
    let mut found: Vec<Unknown> = env
        .names()
        .filter(|name| SETTINGS.binary_search(name).is_err() && !is_service_link(name))
        .filter_map(|name| {
            let near = if name.len() >= 6 { nearest(name) } else { None };
            let prefixed = prefixes.iter().any(|p| name.starts_with(p));
            (prefixed || near.is_some()).then(|| Unknown {
                name: name.to_string(),
                nearest: near,
            })
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}

/// Reports what [`unknown`] finds: an error naming each where
/// `environment` refuses dev shortcuts (a setting that silently does
/// nothing in production is an outage waiting), a warning elsewhere.
pub fn check(env: &EnvReader, environment: AppEnvironment) -> Result<(), ConfigError> {
    let found = unknown(env);
    if found.is_empty() {
        return Ok(());
    }
    if environment.refuses_dev_shortcuts() {
        let all: Vec<String> = found.iter().map(Unknown::to_string).collect();
        return Err(ConfigError::new(&found[0].name, all.join("; ")));
    }
    for unknown in &found {
        tracing::warn!("{unknown}; it is ignored");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(pairs: &[(&str, &str)]) -> Vec<String> {
        let env = EnvReader::from_pairs(pairs.iter().copied());
        unknown(&env).iter().map(Unknown::to_string).collect()
    }

    /// `deploy/storefront.env.example` (the sample a shop starts its
    /// environment from) names every setting once, and nothing else.
    #[test]
    fn the_sample_environment_names_every_setting() {
        let sample = include_str!("../../../deploy/storefront.env.example");
        let named: Vec<&str> = sample
            .lines()
            .filter_map(|l| l.strip_prefix("# ")?.strip_suffix('='))
            .collect();
        assert_eq!(
            named, SETTINGS,
            "regenerate the sample from docs/configuration.md"
        );
    }

    #[test]
    fn the_list_is_sorted_without_repeats() {
        assert!(SETTINGS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_misspelt_setting_is_named_with_the_one_meant() {
        let found = reported(&[
            ("REDIS_ULR", "redis://x"),
            ("CATALOG_SIZ", "10"),
            ("CATALOG_COLOUR", "blue"),
            ("OTEL_EXPORTER_OTLP_ENDPIONT", "http://x"),
        ]);
        assert_eq!(
            found,
            [
                "CATALOG_COLOUR is not a setting",
                "CATALOG_SIZ is not a setting; did you mean CATALOG_SIZE?",
                "OTEL_EXPORTER_OTLP_ENDPIONT is not a setting; did you mean OTEL_EXPORTER_OTLP_ENDPOINT?",
                "REDIS_ULR is not a setting; did you mean REDIS_URL?",
            ]
        );
    }

    #[test]
    fn what_others_set_is_left_alone() {
        let found = reported(&[
            ("PATH", "/bin"),
            ("HOSTNAME", "catalog-0"),
            ("HOME", "/root"),
            ("REDIS_URL", "redis://x"),
            ("CATALOG_SERVICE_HOST", "10.0.0.1"),
            ("CATALOG_SERVICE_PORT_GRPC", "50051"),
            ("CATALOG_PORT", "tcp://10.0.0.1:50051"),
            ("CATALOG_PORT_50051_TCP_ADDR", "10.0.0.1"),
            ("OTEL_RESOURCE_ATTRIBUTES", "k=v"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "k=v"),
            ("RUST_BACKTRACE", "1"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn production_refuses_what_development_warns_of() {
        let env = EnvReader::from_pairs([("REDIS_ULR", "redis://x")]);
        assert!(check(&env, AppEnvironment::Development).is_ok());
        let refused = check(&env, AppEnvironment::Production).expect_err("refused");
        assert_eq!(refused.var, "REDIS_ULR");
        assert!(
            refused.message.contains("did you mean REDIS_URL?"),
            "{refused}"
        );
        assert!(check(&env, AppEnvironment::Staging).is_err());
    }
}
