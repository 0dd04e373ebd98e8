//! A cache of verification keys by `kid`, refetched from wherever the issuer
//! publishes them (a JWKS URL, a gRPC call) on an unknown kid or when stale,
//! at most once per interval however many callers ask.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{AlgorithmFamily, DecodingKey};
use tokio::sync::Mutex;

/// Keys are refetched at most this often, so forged kids cannot turn a
/// verifier into a load generator and an unreachable issuer costs one
/// timeout per interval, not one per call.
pub const MIN_REFETCH_INTERVAL: Duration = Duration::from_secs(10);
/// Keys are refreshed in line once they are this old (issuers rotate).
pub const MAX_KEY_AGE: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("token signed by an unknown key")]
    UnknownKey,
    #[error("verification keys unavailable: {0}")]
    Unavailable(String),
}

#[derive(Default)]
struct Snapshot {
    keys: HashMap<String, Arc<DecodingKey>>,
    fetched_at: Option<Instant>,
    attempted_at: Option<Instant>,
}

impl Snapshot {
    fn fresh(&self) -> bool {
        self.fetched_at.is_some_and(|t| t.elapsed() < MAX_KEY_AGE)
    }

    fn attempted_recently(&self) -> bool {
        self.attempted_at
            .is_some_and(|t| t.elapsed() < MIN_REFETCH_INTERVAL)
    }
}

pub struct KeyCache {
    family: AlgorithmFamily,
    snapshot: RwLock<Arc<Snapshot>>,
    refresh: Mutex<()>,
}

impl KeyCache {
    /// A cache keeping only keys of `family` (RSA, EC, ...).
    pub fn new(family: AlgorithmFamily) -> Self {
        Self {
            family,
            snapshot: RwLock::new(Arc::default()),
            refresh: Mutex::new(()),
        }
    }

    fn current(&self) -> Arc<Snapshot> {
        self.snapshot.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// The key `kid`, fetching with `fetch` when the cache cannot answer.
    pub async fn key<F, Fut>(&self, kid: &str, fetch: F) -> Result<Arc<DecodingKey>, KeyError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<JwkSet, String>>,
    {
        let snap = self.current();
        match snap.keys.get(kid) {
            Some(key) if snap.fresh() || snap.attempted_recently() => return Ok(key.clone()),
            None if snap.attempted_recently() && !snap.keys.is_empty() => {
                return Err(KeyError::UnknownKey);
            }
            _ => {}
        }
        self.refresh(fetch).await?;
        self.current()
            .keys
            .get(kid)
            .cloned()
            .ok_or(KeyError::UnknownKey)
    }

    async fn refresh<F, Fut>(&self, fetch: F) -> Result<(), KeyError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<JwkSet, String>>,
    {
        let _guard = self.refresh.lock().await;
        let snap = self.current();
        if !snap.attempted_recently() {
            let now = Instant::now();
            let next = match fetch().await {
                Ok(set) => Snapshot {
                    keys: self.decode(&set),
                    fetched_at: Some(now),
                    attempted_at: Some(now),
                },
                Err(e) => {
                    // Keep verifying with the keys we have while the issuer is away.
                    tracing::warn!(error = %e, "verification key fetch failed");
                    Snapshot {
                        keys: snap.keys.clone(),
                        fetched_at: snap.fetched_at,
                        attempted_at: Some(now),
                    }
                }
            };
            if let Ok(mut slot) = self.snapshot.write() {
                *slot = Arc::new(next);
            }
        }
        if self.current().keys.is_empty() {
            return Err(KeyError::Unavailable(
                "no verification keys could be fetched".into(),
            ));
        }
        Ok(())
    }

    fn decode(&self, set: &JwkSet) -> HashMap<String, Arc<DecodingKey>> {
        set.keys
            .iter()
            .filter(|jwk| {
                matches!(
                    (&jwk.algorithm, self.family),
                    (AlgorithmParameters::RSA(_), AlgorithmFamily::Rsa)
                        | (AlgorithmParameters::EllipticCurve(_), AlgorithmFamily::Ec)
                )
            })
            .filter_map(|jwk| {
                let kid = jwk.common.key_id.clone()?;
                let key = DecodingKey::from_jwk(jwk).ok()?;
                Some((kid, Arc::new(key)))
            })
            .collect()
    }
}
