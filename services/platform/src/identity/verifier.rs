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
    /// PEM certificates of the only CAs the JWKS is fetched under (None:
    /// the system's roots).
    pub jwks_ca: Option<Vec<u8>>,
    /// Service accounts allowed to call this service: `account` (every
    /// method) or `account=Method|Method` (only those; see [`Allowed`]).
    pub allowed_callers: Vec<String>,
}

/// Who may call which methods: per account, every method or a few. A
/// method is the last segment of a gRPC path (`GetProduct` of
/// `/storefront.catalog.v1.CatalogService/GetProduct`), or of an HTTP path
/// on the gateway's internal port (`reindex`).
#[derive(Debug, Clone, Default)]
pub struct Allowed(HashMap<String, Option<HashSet<String>>>);

impl Allowed {
    /// Parses `ALLOWED_CALLERS` entries; an error names the bad one.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut allowed = HashMap::new();
        for entry in entries {
            let (account, methods) = match entry.split_once('=') {
                None => (entry.trim(), None),
                Some((account, methods)) => {
                    let methods: HashSet<String> =
                        methods.split('|').map(|m| m.trim().to_string()).collect();
                    if methods.iter().any(String::is_empty) {
                        return Err(format!("{entry:?}: an empty method name"));
                    }
                    (account.trim(), Some(methods))
                }
            };
            if account.is_empty() {
                return Err(format!("{entry:?}: no account"));
            }
            allowed.insert(account.to_string(), methods);
        }
        Ok(Self(allowed))
    }

    /// Whether `account` may call anything here.
    pub fn knows(&self, account: &str) -> bool {
        self.0.contains_key(account)
    }

    pub fn permits(&self, account: &str, method: &str) -> bool {
        match self.0.get(account) {
            Some(None) => true,
            Some(Some(methods)) => methods.contains(method),
            None => false,
        }
    }
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
    allowed: Allowed,
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

/// The client fetching the JWKS: under `ca` only when given (settings
/// checked it holds certificates at start).
fn jwks_client(ca: Option<&[u8]>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(5));
    if let Some(pem) = ca {
        let certs = reqwest::Certificate::from_pem_bundle(pem).unwrap_or_default();
        builder = builder.tls_certs_only(certs);
    }
    builder.build().unwrap_or_default()
}

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
            // Settings validate the entries at start; one that slips through
            // permits nothing.
            allowed: Allowed::parse(&config.allowed_callers).unwrap_or_default(),
            jwks_url: config.jwks_url,
            http: jwks_client(config.jwks_ca.as_deref()),
            keys: KeyCache::new(AlgorithmFamily::Rsa),
            verified: RwLock::default(),
        }
    }

    /// Verifies a bearer token of any caller allowed here, whatever it
    /// may call (for what describes the surface rather than a route of it).
    pub async fn verify_known(&self, token: &str) -> Result<Caller, VerifyError> {
        let caller = self.verified(token).await?;
        if !self.allowed.knows(&caller.account) {
            return Err(VerifyError::PermissionDenied(format!(
                "caller {} may not call here",
                caller.account
            )));
        }
        Ok(caller)
    }

    /// Verifies a bearer token and checks that its caller may call `method`.
    pub async fn verify(&self, token: &str, method: &str) -> Result<Caller, VerifyError> {
        let caller = self.verified(token).await?;
        if !self.allowed.permits(&caller.account, method) {
            return Err(VerifyError::PermissionDenied(format!(
                "caller {} may not call {method} here",
                caller.account
            )));
        }
        Ok(caller)
    }

    /// The caller of a valid token, remembered until the token expires.
    async fn verified(&self, token: &str) -> Result<Caller, VerifyError> {
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

    /// The full check: signature, algorithm, issuer, audience, expiry; the
    /// caller and the token's expiry.
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
