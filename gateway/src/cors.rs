//! CORS for storefronts served from their own origin, with tower-http's
//! `CorsLayer`. It sits outside every other layer, so a preflight is
//! answered before the version check, the rate limiter and authentication
//! and never reaches a downstream, and every answer (errors included)
//! carries the CORS headers an allowed origin needs. Tokens travel in
//! headers, not cookies, so credentials are never allowed and `*` is safe
//! outside production (production refuses it: name the shop's origins).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, header};
use storefront_platform::env::{AppEnvironment, ConfigError, EnvReader};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Request headers a storefront may send.
pub const ALLOWED_HEADERS: [HeaderName; 6] = [
    header::CONTENT_TYPE,
    HeaderName::from_static("x-api-version"),
    HeaderName::from_static("x-bff-token"),
    HeaderName::from_static("correlation-id"),
    HeaderName::from_static("idempotency-key"),
    header::IF_NONE_MATCH,
];

/// Response headers a storefront's script may read.
pub const EXPOSED_HEADERS: [HeaderName; 10] = [
    HeaderName::from_static("correlation-id"),
    HeaderName::from_static("x-api-version"),
    header::ETAG,
    header::RETRY_AFTER,
    HeaderName::from_static("ratelimit"),
    HeaderName::from_static("ratelimit-policy"),
    HeaderName::from_static("deprecation"),
    HeaderName::from_static("sunset"),
    header::LINK,
    HeaderName::from_static("idempotent-replayed"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origins {
    /// Any origin (`*`); never in production.
    Any,
    /// Exactly these origins (`scheme://host[:port]`).
    Exactly(Vec<String>),
}

#[derive(Debug, Clone)]
pub struct CorsConfig {
    /// `CORS_ALLOWED_ORIGINS`: comma-separated origins, or `*`.
    pub origins: Origins,
    /// `CORS_MAX_AGE_SECS`: how long a browser may reuse a preflight.
    pub max_age: Duration,
}

/// The local starter storefront's origins (`examples/storefront`).
const LOCAL_ORIGINS: &str = "http://localhost:8000,http://127.0.0.1:8000";

fn origin(raw: &str) -> Result<String, String> {
    let (scheme, rest) = raw
        .split_once("://")
        .ok_or_else(|| format!("{raw:?} is not an origin (scheme://host[:port])"))?;
    let host_ok = !rest.is_empty() && !rest.contains(['/', '?', '#', '*', ' ']);
    if !matches!(scheme, "http" | "https") || !host_ok {
        return Err(format!("{raw:?} is not an origin (scheme://host[:port])"));
    }
    Ok(raw.to_ascii_lowercase())
}

impl CorsConfig {
    pub fn from_env(env: &EnvReader, environment: AppEnvironment) -> Result<Self, ConfigError> {
        let default = if environment.refuses_dev_shortcuts() {
            ""
        } else {
            LOCAL_ORIGINS
        };
        let list = env.list("CORS_ALLOWED_ORIGINS", default);
        let invalid = |m: String| ConfigError::new("CORS_ALLOWED_ORIGINS", m);
        let origins = if list.iter().any(|o| o == "*") {
            if environment == AppEnvironment::Production {
                return Err(invalid(
                    "production names its shops' origins; * is refused".into(),
                ));
            }
            Origins::Any
        } else {
            Origins::Exactly(
                list.iter()
                    .map(|o| origin(o))
                    .collect::<Result<_, _>>()
                    .map_err(invalid)?,
            )
        };
        Ok(Self {
            origins,
            max_age: Duration::from_secs(env.parse("CORS_MAX_AGE_SECS", 600)?),
        })
    }

    pub fn layer(&self) -> CorsLayer {
        let allow = match &self.origins {
            Origins::Any => AllowOrigin::any(),
            Origins::Exactly(list) => {
                let allowed: Arc<HashSet<HeaderValue>> = Arc::new(
                    list.iter()
                        .filter_map(|o| HeaderValue::from_str(o).ok())
                        .collect(),
                );
                AllowOrigin::predicate(move |origin: &HeaderValue, _| {
                    let ok = allowed.contains(origin);
                    if !ok {
                        tracing::debug!(origin = ?origin, "CORS origin not allowed");
                    }
                    ok
                })
            }
        };
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::HEAD,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers(ALLOWED_HEADERS)
            .expose_headers(EXPOSED_HEADERS)
            .max_age(self.max_age)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: AppEnvironment, origins: &str) -> Result<CorsConfig, ConfigError> {
        CorsConfig::from_env(
            &EnvReader::from_pairs([("CORS_ALLOWED_ORIGINS", origins)]),
            env,
        )
    }

    #[test]
    fn origins_are_exact_and_production_refuses_any() {
        let c = config(AppEnvironment::Production, "https://Shop.example.com").unwrap();
        assert_eq!(
            c.origins,
            Origins::Exactly(vec!["https://shop.example.com".into()])
        );
        assert_eq!(
            config(AppEnvironment::Production, "*").unwrap_err().var,
            "CORS_ALLOWED_ORIGINS"
        );
        assert_eq!(
            config(AppEnvironment::Local, "*").unwrap().origins,
            Origins::Any
        );
        for bad in [
            "shop.example.com",
            "https://shop.example.com/path",
            "ftp://x",
            "https://*.x",
        ] {
            assert!(config(AppEnvironment::Local, bad).is_err(), "{bad}");
        }
        let none = CorsConfig::from_env(
            &EnvReader::from_pairs([("A", "b")]),
            AppEnvironment::Staging,
        );
        assert_eq!(
            none.unwrap().origins,
            Origins::Exactly(vec![]),
            "deployed: none by default"
        );
    }
}
