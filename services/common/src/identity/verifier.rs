//! Verification of identity tokens against the issuer's JWKS.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};

use super::keys::{KeyCache, KeyError};
use super::{Caller, IdentityClaims};

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

pub struct IdentityVerifier {
    validation: Validation,
    allowed: HashSet<String>,
    jwks_url: String,
    http: reqwest::Client,
    keys: KeyCache,
    /// Tokens verified already, by their SHA-256, with their expiry: a
    /// caller reuses one token until shortly before it expires, so the RSA
    /// check runs once per token, not once per call.
    verified: RwLock<HashMap<[u8; 32], (Caller, u64)>>,
}

/// Verified tokens remembered at most (callers x audiences is small).
const VERIFIED_CAPACITY: usize = 1024;

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
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
        validation.validate_nbf = true;
        Self {
            validation,
            allowed: config.allowed_callers.into_iter().collect(),
            jwks_url: config.jwks_url,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
            keys: KeyCache::new(AlgorithmFamily::Rsa),
            verified: RwLock::default(),
        }
    }

    /// Verifies a bearer token and checks the caller against the allow-list.
    pub async fn verify(&self, token: &str) -> Result<Caller, VerifyError> {
        let digest: [u8; 32] =
            aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, token.as_bytes())
                .as_ref()
                .try_into()
                .unwrap_or_default();
        let now = unix_now();
        let cached = self
            .verified
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&digest)
            .filter(|(_, exp)| *exp > now)
            .map(|(caller, _)| caller.clone());
        if let Some(caller) = cached {
            return Ok(caller);
        }
        let (caller, exp) = self.verify_signed(token).await?;
        let mut verified = self.verified.write().unwrap_or_else(|p| p.into_inner());
        if verified.len() >= VERIFIED_CAPACITY {
            verified.retain(|_, (_, exp)| *exp > now);
            if verified.len() >= VERIFIED_CAPACITY {
                verified.clear();
            }
        }
        verified.insert(digest, (caller.clone(), exp));
        Ok(caller)
    }

    /// The full check: signature, algorithm, issuer, audience, expiry and
    /// the allow-list; the caller and the token's expiry.
    async fn verify_signed(&self, token: &str) -> Result<(Caller, u64), VerifyError> {
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
        Ok((Caller { account }, data.claims.exp))
    }

    async fn key(&self, kid: &str) -> Result<Arc<DecodingKey>, VerifyError> {
        self.keys
            .key(kid, || self.fetch())
            .await
            .map_err(|e| match e {
                KeyError::UnknownKey => VerifyError::Unauthenticated(format!("identity {e}")),
                KeyError::Unavailable(msg) => VerifyError::Unavailable(msg),
            })
    }

    async fn fetch(&self) -> Result<JwkSet, String> {
        let unavailable = |e: reqwest::Error| e.without_url().to_string();
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
