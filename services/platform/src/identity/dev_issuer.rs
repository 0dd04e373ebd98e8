//! A development identity issuer: mints RS256 identity tokens for any service
//! account and publishes its JWKS, over the same HTTP paths as a cloud
//! metadata server, so the production code paths run unchanged locally.

use std::sync::Arc;
use std::time::Duration;

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rsa::{KeyPair, KeySize};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Deserialize;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{DEV_ISSUER, IdentityClaims};
use crate::env::EnvReader;

pub use super::dev_paths::{IDENTITY_PATH_PREFIX, JWKS_PATH, account_url};

struct Inner {
    key: EncodingKey,
    kid: String,
    jwks: JwkSet,
    ttl: Duration,
}

/// A development issuer holding one freshly generated RSA key.
#[derive(Clone)]
pub struct DevIssuer {
    inner: Arc<Inner>,
}

impl DevIssuer {
    /// Generates a new 2048-bit RSA signing key. Nothing is persisted.
    pub fn generate(ttl: Duration) -> anyhow::Result<Self> {
        let pair = KeyPair::generate(KeySize::Rsa2048)
            .map_err(|_| anyhow::anyhow!("RSA key generation failed"))?;
        let pkcs8 = pair
            .as_der()
            .map_err(|_| anyhow::anyhow!("RSA key export failed"))?;
        let pem = pem_wrap("PRIVATE KEY", pkcs8.as_ref());
        let key = EncodingKey::from_rsa_pem(pem.as_bytes())?;
        let kid = uuid::Uuid::new_v4().simple().to_string();
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256)?;
        jwk.common.key_id = Some(kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        jwk.common.key_algorithm = Some(KeyAlgorithm::RS256);
        let jwks = JwkSet { keys: vec![jwk] };
        Ok(Self {
            inner: Arc::new(Inner {
                key,
                kid,
                jwks,
                ttl,
            }),
        })
    }

    pub fn issuer(&self) -> &'static str {
        DEV_ISSUER
    }

    pub fn jwks(&self) -> &JwkSet {
        &self.inner.jwks
    }

    /// Mints a token for `account` addressed to `audience`.
    pub fn mint(&self, account: &str, audience: &str) -> anyhow::Result<String> {
        self.mint_claims(&self.claims(account, audience))
    }

    /// The claims [`DevIssuer::mint`] would sign, for tests that alter them.
    pub fn claims(&self, account: &str, audience: &str) -> IdentityClaims {
        let now = jsonwebtoken::get_current_timestamp();
        IdentityClaims {
            iss: DEV_ISSUER.to_string(),
            aud: super::Audience::One(audience.to_string()),
            sub: account.to_string(),
            email: Some(account.to_string()),
            iat: now,
            exp: now + self.inner.ttl.as_secs(),
            nbf: None,
        }
    }

    /// Signs arbitrary claims with the issuer's key.
    pub fn mint_claims(&self, claims: &IdentityClaims) -> anyhow::Result<String> {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(self.inner.kid.clone());
        Ok(jsonwebtoken::encode(&header, claims, &self.inner.key)?)
    }

    /// The metadata-server and JWKS endpoints.
    pub fn router(&self) -> Router {
        Router::new()
            .route(
                &format!("{IDENTITY_PATH_PREFIX}/{{account}}/identity"),
                get(identity),
            )
            .route(JWKS_PATH, get(jwks))
            .with_state(self.clone())
    }

    /// Serves [`DevIssuer::router`] until `shutdown` is cancelled.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: CancellationToken,
    ) -> std::io::Result<()> {
        axum::serve(listener, self.router())
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await
    }
}

/// Runs the dev issuer as its own program (`LISTEN_ADDR`, default
/// 127.0.0.1:8091; `DEV_TOKEN_TTL_SECS`, default 3600) until `shutdown`.
/// Refused in production.
pub async fn run(env: EnvReader, shutdown: CancellationToken) -> anyhow::Result<()> {
    if env.environment()?.refuses_dev_shortcuts() {
        anyhow::bail!("APP_ENV=production or staging: the dev identity issuer is refused");
    }
    let ttl = Duration::from_secs(env.parse("DEV_TOKEN_TTL_SECS", 3600)?);
    let listener =
        crate::listen::bind(env.addr("LISTEN_ADDR", &crate::topology::DEV_ISSUER.local_addr())?)?;
    tracing::info!(addr = %listener.local_addr()?, "dev identity issuer listening");
    DevIssuer::generate(ttl)?.serve(listener, shutdown).await?;
    Ok(())
}

#[derive(Deserialize)]
struct IdentityQuery {
    audience: Option<String>,
}

async fn identity(
    State(issuer): State<DevIssuer>,
    Path(account): Path<String>,
    Query(query): Query<IdentityQuery>,
    headers: HeaderMap,
) -> Result<String, (StatusCode, &'static str)> {
    // The header a real metadata server insists on, against SSRF.
    if headers.get("metadata-flavor").and_then(|v| v.to_str().ok()) != Some("Google") {
        return Err((StatusCode::FORBIDDEN, "missing Metadata-Flavor: Google"));
    }
    let audience = query
        .audience
        .filter(|a| !a.is_empty())
        .ok_or((StatusCode::BAD_REQUEST, "audience required"))?;
    issuer
        .mint(&account, &audience)
        .map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "signing failed"))
}

async fn jwks(State(issuer): State<DevIssuer>) -> Json<JwkSet> {
    Json(issuer.inner.jwks.clone())
}

fn pem_wrap(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str(&format!("-----END {label}-----\n"));
    pem
}
