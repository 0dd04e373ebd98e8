//! The gateway's configuration, from environment variables.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::time::Duration;
use storefront_platform::store::RedisTarget;

use storefront_platform::env::{AppEnvironment, ConfigError, EnvReader};
use storefront_platform::identity::token_source::TokenOrigin;
use storefront_platform::identity::verifier::VerifierConfig;
use storefront_platform::settings::ProgramSettings;
use storefront_platform::topology::{self, PeerConfig};

use crate::cors::CorsConfig;
use crate::middleware::idempotency_allowance::{Allowance, Allowances};
use crate::openapi::settings::DocumentSettings;
use crate::policy::{CachePolicies, CachePolicy, Policies};
use crate::ratelimit::{Quota, Scope, TrustedProxies};

/// A downstream gRPC service: where it is and the audience of its tokens.
pub type DownstreamConfig = PeerConfig;

fn cache_policy(env: &EnvReader, var: &str, default: &str) -> Result<CachePolicy, ConfigError> {
    let raw = env.string(var, default);
    let parsed = raw
        .split_once(',')
        .and_then(|(a, s)| Some((a.trim().parse().ok()?, s.trim().parse().ok()?)));
    let (max_age, stale_while_revalidate) = parsed.ok_or_else(|| {
        ConfigError::new(
            var,
            format!("{raw:?}: expected max-age,stale-while-revalidate in seconds"),
        )
    })?;
    Ok(CachePolicy {
        max_age,
        stale_while_revalidate,
    })
}

/// `ROUTE_TIMEOUTS` folded into the edge's policy table.
fn policies(env: &EnvReader) -> Result<Policies, ConfigError> {
    let deadlines = env
        .list("ROUTE_TIMEOUTS", "")
        .into_iter()
        .map(|pair| {
            let parsed = pair.split_once('=').and_then(|(p, ms)| {
                let ms: u64 = ms.trim().parse().ok().filter(|ms| *ms > 0)?;
                Some((p.trim().to_string(), Duration::from_millis(ms)))
                    .filter(|(p, _)| p.starts_with('/'))
            });
            parsed.ok_or_else(|| {
                ConfigError::new(
                    "ROUTE_TIMEOUTS",
                    format!("{pair:?}: expected /path-prefix=milliseconds"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Policies::new(&deadlines))
}

/// Rate limits per scope; a scope set to `off` is not limited.
#[derive(Debug, Clone)]
pub struct RateLimitConfig {
    pub quotas: HashMap<Scope, Quota>,
    /// `TRUSTED_PROXIES`: whose X-Forwarded-For is believed.
    pub trusted_proxies: TrustedProxies,
    /// `RATE_LIMIT_FAIL_CLOSED`: scopes refused (503) rather than waved
    /// through while Redis is away.
    pub fail_closed: HashSet<Scope>,
}

fn rate_limits(env: &EnvReader) -> Result<RateLimitConfig, ConfigError> {
    let mut quotas = HashMap::new();
    for (scope, var, default) in [
        (Scope::Ip, "RATE_LIMIT_IP", "600/60s"),
        (Scope::Session, "RATE_LIMIT_SESSION", "300/60s"),
        (Scope::Search, "RATE_LIMIT_SEARCH", "120/60s"),
        (Scope::Login, "RATE_LIMIT_LOGIN", "20/60s"),
        (Scope::LoginEmail, "RATE_LIMIT_LOGIN_EMAIL", "10/1h"),
        (Scope::LoginAccount, "RATE_LIMIT_LOGIN_ACCOUNT", "100/1h"),
        (Scope::SignUp, "RATE_LIMIT_SIGNUP", "20/60s"),
        (Scope::Guest, "RATE_LIMIT_GUEST", "30/60s"),
        (Scope::PasswordChange, "RATE_LIMIT_PASSWORD_CHANGE", "5/15m"),
        (Scope::Checkout, "RATE_LIMIT_CHECKOUT", "30/60s"),
        (
            Scope::CheckoutSession,
            "RATE_LIMIT_CHECKOUT_SESSION",
            "10/60s",
        ),
        (Scope::Service, "RATE_LIMIT_SERVICE", "6000/60s"),
        (Scope::Maintenance, "RATE_LIMIT_MAINTENANCE", "1/10s"),
        (Scope::Agent, "RATE_LIMIT_AGENT", "1200/60s"),
    ] {
        let raw = env.string(var, default);
        if raw != "off" {
            quotas.insert(
                scope,
                raw.parse().map_err(|e: String| ConfigError::new(var, e))?,
            );
        }
    }
    let trusted_proxies = TrustedProxies::parse(&env.list("TRUSTED_PROXIES", ""))
        .map_err(|e| ConfigError::new("TRUSTED_PROXIES", e))?;
    let mut fail_closed = HashSet::new();
    for name in env.list(
        "RATE_LIMIT_FAIL_CLOSED",
        "login,login-email,login-account,signup",
    ) {
        let scope = Scope::from_name(&name).ok_or_else(|| {
            ConfigError::new("RATE_LIMIT_FAIL_CLOSED", format!("{name:?} is not a scope"))
        })?;
        fail_closed.insert(scope);
    }
    Ok(RateLimitConfig {
        quotas,
        trusted_proxies,
        fail_closed,
    })
}

/// What the gateway needs to call its downstreams, and nothing else of
/// its configuration.
#[derive(Debug, Clone)]
pub struct DownstreamSettings {
    /// Each program the gateway calls (the topology's): `CATALOG_URL`,
    /// `CATALOG_AUDIENCE`, `CUSTOMERS_URL`, ... `CONTENT_AUDIENCE`.
    pub peers: Vec<DownstreamConfig>,
    /// `IDENTITY_TOKEN_DIR` or `IDENTITY_TOKEN_URL`: where the gateway's
    /// identity tokens come from.
    pub identity_tokens: TokenOrigin,
    /// `BREAKER_THRESHOLD`: failed reads in a row that open a downstream's circuit.
    pub breaker_threshold: u32,
    /// `BREAKER_OPEN_MS`: how long an open circuit refuses calls.
    pub breaker_open_for: Duration,
    /// `GRPC_TIMEOUT_MS`: the deadline of each downstream call.
    pub grpc_timeout: Duration,
    /// `DOWNSTREAM_CONCURRENCY`: calls in flight per downstream before
    /// more are shed (503 `DOWNSTREAM_BUSY`).
    pub concurrency: usize,
}

impl DownstreamSettings {
    /// The configuration of the downstream program `name`.
    pub fn peer(&self, name: &str) -> Option<&DownstreamConfig> {
        self.peers.iter().find(|d| d.name == name)
    }

    fn from_env(env: &EnvReader, environment: AppEnvironment) -> Result<Self, ConfigError> {
        Ok(Self {
            peers: topology::GATEWAY
                .downstreams()
                .map(|program| program.peer_config(env))
                .collect::<Result<_, _>>()?,
            identity_tokens: env.identity_tokens(
                environment,
                &dev_identity_url(&topology::DEV_ISSUER.local_url()),
            )?,
            breaker_threshold: env.parse("BREAKER_THRESHOLD", 5)?,
            breaker_open_for: env.millis("BREAKER_OPEN_MS", 5_000)?,
            grpc_timeout: env.millis("GRPC_TIMEOUT_MS", 5_000)?,
            concurrency: env.parse(
                "DOWNSTREAM_CONCURRENCY",
                storefront_platform::client::DEFAULT_CONCURRENCY,
            )?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    pub cache: CachePolicies,
    /// `CORS_ALLOWED_ORIGINS`, `CORS_MAX_AGE_SECS`.
    pub cors: CorsConfig,
    pub rate_limits: RateLimitConfig,
    /// What every program shares: `APP_ENV`, `LISTEN_ADDR` (default
    /// 127.0.0.1:8080), the identity issuer and its JWKS, drain and
    /// shutdown delay.
    pub program: ProgramSettings,
    /// How the gateway calls its downstreams.
    pub calls: DownstreamSettings,
    /// `INTERNAL_LISTEN_ADDR`: the internal REST port (fulfilment), never public.
    pub internal_addr: SocketAddr,
    /// Identity tokens on the internal port: `INTERNAL_AUDIENCE`, and
    /// `INTERNAL_CALLERS` (the accounts allowed there).
    pub internal_identity: VerifierConfig,
    /// `REDIS_URL`: shared session revocations (in memory without it).
    pub redis: Option<RedisTarget>,
    /// `TOKEN_ISSUER`, `TOKEN_AUDIENCE`: what customer tokens must say.
    pub token_issuer: String,
    pub token_audience: String,
    /// Each route's edge policy, with `ROUTE_TIMEOUTS` (`path-prefix=ms`
    /// pairs: the downstream deadline of the routes under a prefix, the
    /// longest prefix winning; routes without one use GRPC_TIMEOUT_MS)
    /// folded in.
    pub policies: Policies,
    /// `OPENAPI_*`: the servers, contact and license the document names.
    pub document: DocumentSettings,
    /// `IDEMPOTENCY_TTL_SECS` (86,400, at least 60): how long the answer
    /// to a request with an `Idempotency-Key` is kept for its repeats.
    pub idempotency_ttl: Duration,
    /// `IDEMPOTENCY_MAX_KEYS`/`_BYTES` per principal and
    /// `IDEMPOTENCY_MAX_KEYS_NETWORK`/`_BYTES_NETWORK` per client network:
    /// what may be kept over `IDEMPOTENCY_TTL_SECS`.
    pub idempotency_allowances: Allowances,
    /// `CATALOG_IMPORT_MAX_BYTES` (4 GiB): the largest feed
    /// `POST /internal/catalog/import` streams in (413 beyond).
    pub import_max_bytes: usize,
    /// `PRODUCT_JSON_CACHE_MB` (32; 0: none): products' JSON kept for
    /// the next listing or search that shows the same bytes.
    pub product_json_bytes: usize,
    /// The Agentic Commerce Protocol facade: `ACP_AGENTS`, `ACP_BASE_URL`,
    /// `ACP_ORDER_URL` (docs/agents.md).
    pub acp: AcpSettings,
}

#[derive(Debug, Clone)]
pub struct AcpSettings {
    pub agents: storefront_platform::agents::Agents,
    pub base_url: String,
    pub order_url: String,
    /// `ACP_PRODUCT_URL`: a product's page in the feed for agents.
    pub product_url: String,
}

impl AcpSettings {
    /// The host agents reach the shop by (`ACP_BASE_URL`'s), for the MCP
    /// server's `Host` check.
    pub fn hosts(&self) -> Vec<String> {
        let uri: Option<axum::http::Uri> = self.base_url.parse().ok();
        uri.and_then(|u| u.host().map(str::to_string))
            .into_iter()
            .collect()
    }

    /// Production and staging with agents: https URLs for agents to show
    /// buyers.
    fn from_env(env: &EnvReader, environment: AppEnvironment) -> Result<Self, ConfigError> {
        let agents = storefront_platform::agents::Agents::from_env(env, environment)?;
        let deployed = environment.refuses_dev_shortcuts() && !agents.is_empty();
        let base_url = env.string("ACP_BASE_URL", "http://127.0.0.1:8080/acp");
        if !(base_url.starts_with("https://") || (!deployed && base_url.starts_with("http://"))) {
            return Err(ConfigError::new("ACP_BASE_URL", "must be an https:// URL"));
        }
        let product_url = env.string(
            "ACP_PRODUCT_URL",
            "http://127.0.0.1:8080/products/{productId}",
        );
        if !(product_url.starts_with("https://")
            || (!deployed && product_url.starts_with("http://")))
        {
            return Err(ConfigError::new(
                "ACP_PRODUCT_URL",
                "must be an https:// URL",
            ));
        }
        Ok(AcpSettings {
            product_url,
            order_url: storefront_platform::agents::order_url(env, deployed)?,
            agents,
            base_url,
        })
    }
}

/// `IDEMPOTENCY_MAX_*`, each above 0.
fn idempotency_allowances(env: &EnvReader) -> Result<Allowances, ConfigError> {
    let d = Allowances::default();
    let allowance = |suffix: &str, default: Allowance| -> Result<Allowance, ConfigError> {
        let keys_name = format!("IDEMPOTENCY_MAX_KEYS{suffix}");
        let bytes_name = format!("IDEMPOTENCY_MAX_BYTES{suffix}");
        let keys: u64 = env.parse(&keys_name, default.keys)?;
        let bytes: u64 = env.parse(&bytes_name, default.bytes)?;
        if keys == 0 || bytes == 0 {
            return Err(ConfigError::new(
                keys_name,
                "keys and bytes must be above 0",
            ));
        }
        Ok(Allowance { keys, bytes })
    };
    Ok(Allowances {
        principal: allowance("", d.principal)?,
        network: allowance("_NETWORK", d.network)?,
    })
}

pub fn dev_identity_url(issuer_base: &str) -> String {
    topology::GATEWAY.dev_token_url(issuer_base)
}

/// `PRODUCT_JSON_CACHE_MB`, at most 4,096 (a typo's extra zeros
/// should not reserve the machine's memory).
fn product_json_bytes(env: &EnvReader) -> Result<usize, ConfigError> {
    let default = crate::transcode::DEFAULT_PRODUCT_JSON_BYTES >> 20;
    let mb: usize = env.parse("PRODUCT_JSON_CACHE_MB", default)?;
    if mb > 4096 {
        return Err(ConfigError::new(
            "PRODUCT_JSON_CACHE_MB",
            "at most 4096 (MiB); 0 keeps none",
        ));
    }
    Ok(mb << 20)
}

impl GatewayConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let program = ProgramSettings::from_env(&topology::GATEWAY, env)?;
        let environment = program.environment;
        let internal_identity = program.verifier(
            env.string("INTERNAL_AUDIENCE", "gateway-internal"),
            env.list(
                "INTERNAL_CALLERS",
                "fulfilment@storefront.iam.gserviceaccount.com=status|orders|events|webhooks,ops@storefront.iam.gserviceaccount.com=reindex|reload,merchandising@storefront.iam.gserviceaccount.com=products|stock|import|export|promotions|markets",
            ),
            "INTERNAL_CALLERS",
        )?;
        let cache = CachePolicies {
            catalog: cache_policy(env, "CACHE_CATALOG", "60,300")?,
            search: cache_policy(env, "CACHE_SEARCH", "30,60")?,
            content: cache_policy(env, "CACHE_CONTENT", "300,3600")?,
        };
        let config = Self {
            cache,
            cors: CorsConfig::from_env(env, environment)?,
            rate_limits: rate_limits(env)?,
            calls: DownstreamSettings::from_env(env, environment)?,
            internal_addr: env.addr(
                "INTERNAL_LISTEN_ADDR",
                &format!("127.0.0.1:{}", topology::GATEWAY_INTERNAL_PORT),
            )?,
            internal_identity,
            token_issuer: env.string("TOKEN_ISSUER", "storefront-customers"),
            token_audience: env.string("TOKEN_AUDIENCE", "storefront-bff"),
            // Without shared state a logout would not reach the other replicas.
            redis: env.redis(environment, "sessions and rate limits")?,
            policies: policies(env)?,
            document: DocumentSettings::from_env(env, environment)?,
            idempotency_ttl: Duration::from_secs(env.parse("IDEMPOTENCY_TTL_SECS", 86_400)?),
            idempotency_allowances: idempotency_allowances(env)?,
            import_max_bytes: env.parse("CATALOG_IMPORT_MAX_BYTES", 4usize << 30)?,
            product_json_bytes: product_json_bytes(env)?,
            acp: AcpSettings::from_env(env, environment)?,
            program,
        };
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.calls.concurrency == 0 {
            return Err(ConfigError::new(
                "DOWNSTREAM_CONCURRENCY",
                "must be greater than 0",
            ));
        }
        if self.import_max_bytes == 0 {
            return Err(ConfigError::new(
                "CATALOG_IMPORT_MAX_BYTES",
                "must be greater than 0",
            ));
        }
        if self.idempotency_ttl < Duration::from_secs(60) {
            return Err(ConfigError::new(
                "IDEMPOTENCY_TTL_SECS",
                "at least 60: a client's retries must find the first answer",
            ));
        }
        if self.calls.grpc_timeout.is_zero() {
            return Err(ConfigError::new(
                "GRPC_TIMEOUT_MS",
                "must be greater than 0",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Production refuses each dev shortcut in turn, the shared ones (dev
    /// issuer, a JWKS not over https) as every service does.
    #[test]
    fn production_refuses_the_dev_issuer() {
        let mut env = EnvReader::from_pairs([("APP_ENV", "production")]);
        let refused = |env: &EnvReader| GatewayConfig::from_env(env).unwrap_err().var;
        assert_eq!(refused(&env), "IDENTITY_ISSUER");
        env.set("IDENTITY_ISSUER", "https://accounts.google.com");
        assert_eq!(refused(&env), "IDENTITY_JWKS_URL");
        env.set(
            "IDENTITY_JWKS_URL",
            "http://www.googleapis.com/oauth2/v3/certs",
        );
        assert_eq!(refused(&env), "IDENTITY_JWKS_URL");
        env.set(
            "IDENTITY_JWKS_URL",
            "https://www.googleapis.com/oauth2/v3/certs",
        );
        assert_eq!(refused(&env), "IDENTITY_TOKEN_URL");
        env.set(
            "IDENTITY_TOKEN_URL",
            "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/identity",
        );
        assert_eq!(refused(&env), "REDIS_URL");
        env.set("REDIS_URL", "redis://redis:6379/");
        assert!(GatewayConfig::from_env(&env).is_ok());
    }

    /// Projected service-account tokens (any cluster): a directory, not
    /// beside a metadata URL; a JWKS CA file must hold certificates.
    #[test]
    fn projected_tokens_come_from_a_directory() {
        let dir = std::env::temp_dir();
        let dir = dir.to_str().unwrap();
        let env = EnvReader::from_pairs([("IDENTITY_TOKEN_DIR", dir)]);
        let config = GatewayConfig::from_env(&env).unwrap();
        assert_eq!(config.calls.identity_tokens, TokenOrigin::Files(dir.into()));
        let missing = EnvReader::from_pairs([("IDENTITY_TOKEN_DIR", "/no/such/dir")]);
        assert_eq!(
            GatewayConfig::from_env(&missing).unwrap_err().var,
            "IDENTITY_TOKEN_DIR"
        );
        let both = EnvReader::from_pairs([
            ("IDENTITY_TOKEN_DIR", dir),
            ("IDENTITY_TOKEN_URL", "http://metadata.google.internal/x"),
        ]);
        assert_eq!(
            GatewayConfig::from_env(&both).unwrap_err().var,
            "IDENTITY_TOKEN_DIR"
        );
        let not_pem = EnvReader::from_pairs([("IDENTITY_JWKS_CA_FILE", "Cargo.toml")]);
        assert_eq!(
            GatewayConfig::from_env(&not_pem).unwrap_err().var,
            "IDENTITY_JWKS_CA_FILE"
        );
    }

    #[test]
    fn bad_values_name_their_variable() {
        let env = EnvReader::from_pairs([("GRPC_TIMEOUT_MS", "soon")]);
        assert_eq!(
            GatewayConfig::from_env(&env).unwrap_err().var,
            "GRPC_TIMEOUT_MS"
        );
        let env = EnvReader::from_pairs([("CATALOG_URL", "catalog:50051")]);
        assert_eq!(
            GatewayConfig::from_env(&env).unwrap_err().var,
            "CATALOG_URL"
        );
        for (mb, held) in [("40960", None), ("0", Some(0)), ("8", Some(8 << 20))] {
            let env = EnvReader::from_pairs([("PRODUCT_JSON_CACHE_MB", mb)]);
            match GatewayConfig::from_env(&env) {
                Ok(config) => assert_eq!(Some(config.product_json_bytes), held),
                Err(e) => assert_eq!((e.var.as_str(), held), ("PRODUCT_JSON_CACHE_MB", None)),
            }
        }
    }
}
