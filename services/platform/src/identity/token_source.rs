//! The calling side: identity tokens fetched from the metadata server (or the
//! dev issuer standing in for it) or read from projected service-account
//! token files, cached per audience until shortly before they expire.

use std::collections::HashMap;
use std::path::PathBuf;
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

/// Where a program's identity tokens come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenOrigin {
    /// A metadata server's identity endpoint, asked
    /// `{url}?audience=<aud>&format=full` with `Metadata-Flavor: Google`
    /// (GKE workload identity, or the dev issuer).
    Metadata(String),
    /// A directory holding one token per audience in a file named after
    /// it: Kubernetes projected service-account tokens (any cluster: EKS,
    /// AKS, bare), which the kubelet renews before they expire.
    Files(PathBuf),
}

impl From<String> for TokenOrigin {
    fn from(url: String) -> Self {
        TokenOrigin::Metadata(url)
    }
}

impl From<&str> for TokenOrigin {
    fn from(url: &str) -> Self {
        TokenOrigin::Metadata(url.to_string())
    }
}

/// Identity tokens per audience, from a [`TokenOrigin`].
pub struct TokenSource {
    origin: TokenOrigin,
    http: reqwest::Client,
    cache: Mutex<HashMap<String, Cached>>,
    fetch: tokio::sync::Mutex<()>,
}

impl TokenSource {
    pub fn new(origin: impl Into<TokenOrigin>) -> Self {
        Self {
            origin: origin.into(),
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
                TokenError(format!(
                    "the identity token for {audience} is unreadable: {e}"
                ))
            })?;
        let lifetime = claims.exp.saturating_sub(claims.iat);
        let margin = REFRESH_MARGIN_SECS.min(lifetime / 2);
        let mut bearer = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|_| TokenError(format!("the identity token for {audience} is not ASCII")))?;
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
        let url = match &self.origin {
            TokenOrigin::Metadata(url) => url,
            TokenOrigin::Files(dir) => return read_token(dir, audience),
        };
        let err = |e: reqwest::Error| TokenError(e.without_url().to_string());
        let body = self
            .http
            .get(url)
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

/// The token for `audience` in `dir`: its file, named as the audience (a
/// name of letters, digits, `.`, `_` and `-`, so never a path elsewhere).
fn read_token(dir: &std::path::Path, audience: &str) -> Result<String, TokenError> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if audience.is_empty() || audience.starts_with('.') || !audience.chars().all(plain) {
        return Err(TokenError(format!(
            "no token file can be named for the audience {audience:?}"
        )));
    }
    let path = dir.join(audience);
    // A few hundred bytes on the kubelet's in-memory volume, read once per
    // token lifetime: not worth a blocking-pool hop.
    let text = std::fs::read_to_string(&path)
        .map_err(|e| TokenError(format!("cannot read {}: {e}", path.display())))?;
    Ok(text.trim().to_string())
}
