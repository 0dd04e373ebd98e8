//! The calling side: identity tokens fetched from the metadata server (or the
//! dev issuer standing in for it), cached per audience until shortly before
//! they expire.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};

use super::IdentityClaims;

/// Tokens are replaced this long before they expire, so none expires in
/// flight.
const REFRESH_MARGIN_SECS: u64 = 60;

#[derive(Debug, Clone, thiserror::Error)]
#[error("identity token unavailable: {0}")]
pub struct TokenError(String);

#[derive(Clone)]
struct Cached {
    /// `Bearer <token>`, built once per token and marked sensitive so that
    /// HTTP/2 never indexes it and debug output never shows it.
    bearer: MetadataValue<Ascii>,
    refresh_at: u64,
}

/// Fetches identity tokens from
/// `{identity_url}?audience=<aud>&format=full` with `Metadata-Flavor: Google`.
pub struct TokenSource {
    identity_url: String,
    http: reqwest::Client,
    cache: Mutex<HashMap<String, Cached>>,
    fetch: tokio::sync::Mutex<()>,
}

impl TokenSource {
    pub fn new(identity_url: impl Into<String>) -> Self {
        Self {
            identity_url: identity_url.into(),
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
            cache: Mutex::new(HashMap::new()),
            fetch: tokio::sync::Mutex::new(()),
        }
    }

    /// `Bearer <token>` for `audience`, from the cache when it has one.
    pub async fn bearer(&self, audience: &str) -> Result<MetadataValue<Ascii>, TokenError> {
        if let Some(token) = self.cached(audience) {
            return Ok(token);
        }
        // One fetch at a time; whoever waited finds the cache filled.
        let _guard = self.fetch.lock().await;
        if let Some(token) = self.cached(audience) {
            return Ok(token);
        }
        let token = self.fetch(audience).await?;
        let claims = jsonwebtoken::dangerous::insecure_decode_claims::<IdentityClaims>(&token)
            .map_err(|e| {
                TokenError(format!("metadata server returned an unreadable token: {e}"))
            })?;
        let lifetime = claims.exp.saturating_sub(claims.iat);
        let margin = REFRESH_MARGIN_SECS.min(lifetime / 2);
        let mut bearer = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| TokenError("metadata server returned a token that is not ASCII".into()))?;
        bearer.set_sensitive(true);
        let cached = Cached {
            bearer: bearer.clone(),
            refresh_at: claims.exp.saturating_sub(margin),
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(audience.to_string(), cached);
        }
        Ok(bearer)
    }

    fn cached(&self, audience: &str) -> Option<MetadataValue<Ascii>> {
        let now = jsonwebtoken::get_current_timestamp();
        let cache = self.cache.lock().ok()?;
        cache
            .get(audience)
            .filter(|c| now < c.refresh_at)
            .map(|c| c.bearer.clone())
    }

    async fn fetch(&self, audience: &str) -> Result<String, TokenError> {
        let err = |e: reqwest::Error| TokenError(e.without_url().to_string());
        let body = self
            .http
            .get(&self.identity_url)
            .query(&[("audience", audience), ("format", "full")])
            .header("Metadata-Flavor", "Google")
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(err)?
            .text()
            .await
            .map_err(err)?;
        Ok(body.trim().to_string())
    }
}
