//! Verification of identity tokens against the issuer's JWKS.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use tokio::sync::Mutex;

use super::{Caller, IdentityClaims};

/// Keys are refetched at most this often when a token names an unknown `kid`,
/// so forged kids cannot turn the verifier into a load generator.
const MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(10);
/// Keys are refreshed in line once they are this old (issuers rotate daily).
const MAX_KEY_AGE: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone)]
pub struct VerifierConfig {
    /// The expected `iss`.
    pub issuer: String,
    /// The expected `aud`: the called service.
    pub audience: String,
    pub jwks_url: String,
    /// Service accounts allowed to call this service.
    pub allowed_callers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("identity keys unavailable: {0}")]
    Unavailable(String),
}

#[derive(Default)]
struct KeyCache {
    keys: HashMap<String, Arc<DecodingKey>>,
    /// The last successful fetch.
    fetched_at: Option<Instant>,
    /// The last attempt, successful or not: no new attempt within
    /// [`MIN_REFETCH_INTERVAL`], so an unreachable issuer costs one timeout
    /// per interval, not one per call.
    attempted_at: Option<Instant>,
}

impl KeyCache {
    fn fresh(&self) -> bool {
        self.fetched_at.is_some_and(|t| t.elapsed() < MAX_KEY_AGE)
    }

    fn attempted_recently(&self) -> bool {
        self.attempted_at
            .is_some_and(|t| t.elapsed() < MIN_REFETCH_INTERVAL)
    }
}

pub struct IdentityVerifier {
    validation: Validation,
    allowed: HashSet<String>,
    jwks_url: String,
    http: reqwest::Client,
    cache: RwLock<Arc<KeyCache>>,
    refresh: Mutex<()>,
}

impl IdentityVerifier {
    pub fn new(config: VerifierConfig) -> Self {
        // Pinned: only RS256, only this issuer and audience, and the claims
        // that make a token meaningful must be present.
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&[&config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 30;
        Self {
            validation,
            allowed: config.allowed_callers.into_iter().collect(),
            jwks_url: config.jwks_url,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
            cache: RwLock::new(Arc::default()),
            refresh: Mutex::new(()),
        }
    }

    /// Verifies a bearer token and checks the caller against the allow-list.
    pub async fn verify(&self, token: &str) -> Result<Caller, VerifyError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| VerifyError::Unauthenticated("malformed identity token".into()))?;
        if header.alg != Algorithm::RS256 {
            return Err(VerifyError::Unauthenticated(
                "identity token algorithm not accepted".into(),
            ));
        }
        let kid = header
            .kid
            .ok_or_else(|| VerifyError::Unauthenticated("identity token has no key id".into()))?;
        let key = self.key(&kid).await?;
        let data = jsonwebtoken::decode::<IdentityClaims>(token, &key, &self.validation)
            .map_err(|e| VerifyError::Unauthenticated(format!("identity token rejected: {e}")))?;
        let account = data.claims.email.unwrap_or(data.claims.sub);
        if !self.allowed.contains(&account) {
            return Err(VerifyError::PermissionDenied(format!(
                "caller {account} is not allowed to call this service"
            )));
        }
        Ok(Caller { account })
    }

    async fn key(&self, kid: &str) -> Result<Arc<DecodingKey>, VerifyError> {
        let cache = self.snapshot();
        match cache.keys.get(kid) {
            Some(key) if cache.fresh() || cache.attempted_recently() => return Ok(key.clone()),
            None if cache.attempted_recently() && !cache.keys.is_empty() => {
                return Err(VerifyError::Unauthenticated(
                    "identity token signed by an unknown key".into(),
                ));
            }
            _ => {}
        }
        let refreshed = self.refresh().await;
        let cache = self.snapshot();
        match (cache.keys.get(kid), refreshed) {
            (Some(key), _) => Ok(key.clone()),
            (None, Err(e)) => Err(e),
            (None, Ok(())) => Err(VerifyError::Unauthenticated(
                "identity token signed by an unknown key".into(),
            )),
        }
    }

    fn snapshot(&self) -> Arc<KeyCache> {
        self.cache.read().map(|c| c.clone()).unwrap_or_default()
    }

    /// Refetches the JWKS, once for all concurrent callers.
    async fn refresh(&self) -> Result<(), VerifyError> {
        let _guard = self.refresh.lock().await;
        let cache = self.snapshot();
        if cache.attempted_recently() {
            // Someone else just fetched (or failed to) while we waited.
            return if cache.keys.is_empty() {
                Err(VerifyError::Unavailable(
                    "identity keys could not be fetched".into(),
                ))
            } else {
                Ok(())
            };
        }
        let now = Instant::now();
        let next = match self.fetch().await {
            Ok(set) => KeyCache {
                keys: decoding_keys(&set),
                fetched_at: Some(now),
                attempted_at: Some(now),
            },
            Err(e) => {
                // Keep serving with the keys we have while the issuer is away.
                tracing::warn!(error = %e, "identity jwks fetch failed");
                KeyCache {
                    keys: cache.keys.clone(),
                    fetched_at: cache.fetched_at,
                    attempted_at: Some(now),
                }
            }
        };
        let empty = next.keys.is_empty();
        if let Ok(mut slot) = self.cache.write() {
            *slot = Arc::new(next);
        }
        if empty {
            return Err(VerifyError::Unavailable(
                "identity keys could not be fetched".into(),
            ));
        }
        Ok(())
    }

    async fn fetch(&self) -> Result<JwkSet, VerifyError> {
        let unavailable = |e: reqwest::Error| VerifyError::Unavailable(e.without_url().to_string());
        self.http
            .get(&self.jwks_url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(unavailable)?
            .json::<JwkSet>()
            .await
            .map_err(unavailable)
    }
}

/// RSA keys of the set, by kid; keys of any other type are ignored.
fn decoding_keys(set: &JwkSet) -> HashMap<String, Arc<DecodingKey>> {
    set.keys
        .iter()
        .filter(|jwk| matches!(jwk.algorithm, AlgorithmParameters::RSA(_)))
        .filter_map(|jwk| {
            let kid = jwk.common.key_id.clone()?;
            let key = DecodingKey::from_jwk(jwk).ok()?;
            Some((kid, Arc::new(key)))
        })
        .collect()
}
