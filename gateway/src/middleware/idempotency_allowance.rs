//! What one principal, and one client network, may keep of idempotent
//! answers over a key's lifetime (`IDEMPOTENCY_TTL_SECS`): a count of keys
//! and the bytes of their answers. Each new key spends one of the count;
//! each kept answer its bytes. Once either is spent, a new key is refused
//! (429 with `Retry-After`, until the window ends), never run unprotected;
//! repeats of keys already kept still replay. Shared through the store, so
//! every gateway replica spends one allowance.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use storefront_platform::store::{Store, StoreError, Updated};

use crate::error::ApiError;

/// Keys and answer bytes one holder may keep in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    pub keys: u64,
    pub bytes: u64,
}

/// `IDEMPOTENCY_MAX_KEYS` (1,000) and `IDEMPOTENCY_MAX_BYTES` (8 MiB) per
/// principal; `IDEMPOTENCY_MAX_KEYS_NETWORK` (10,000) and
/// `IDEMPOTENCY_MAX_BYTES_NETWORK` (64 MiB) per client network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowances {
    pub principal: Allowance,
    pub network: Allowance,
}

impl Default for Allowances {
    fn default() -> Self {
        Self {
            principal: Allowance {
                keys: 1_000,
                bytes: 8 << 20,
            },
            network: Allowance {
                keys: 10_000,
                bytes: 64 << 20,
            },
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Usage {
    /// When the window began (ms since the epoch).
    since_ms: u64,
    keys: u64,
    bytes: u64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A holder whose allowance is spent: whole seconds until its window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    pub retry_after: u64,
}

/// Applies a new key (`keys` 1) or a kept answer's bytes to `usage` at
/// `now`, in a window of `window` ms; a new key is refused once either
/// the count or the bytes are spent.
fn spend(
    usage: &mut Usage,
    now: u64,
    window: u64,
    keys: u64,
    bytes: u64,
    allowance: Allowance,
) -> Result<(), Spent> {
    if now.saturating_sub(usage.since_ms) >= window {
        *usage = Usage {
            since_ms: now,
            ..Usage::default()
        };
    }
    if keys > 0 && (usage.keys + keys > allowance.keys || usage.bytes >= allowance.bytes) {
        let ends = usage.since_ms + window;
        return Err(Spent {
            retry_after: ends.saturating_sub(now).div_ceil(1000).max(1),
        });
    }
    usage.keys += keys;
    usage.bytes = usage.bytes.saturating_add(bytes);
    Ok(())
}

/// Error of a spend: the allowance, or the store.
pub enum Refused {
    Spent(Spent),
    Store(StoreError),
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        Refused::Store(e)
    }
}

/// The allowances, kept in `store` for a window of `ttl`.
#[derive(Clone)]
pub struct Allowed {
    pub store: Store,
    pub ttl: Duration,
    pub limits: Allowances,
}

impl Allowed {
    fn key(holder: &str) -> String {
        format!("idem-usage:{holder}")
    }

    /// Spends `keys` and `bytes` of `holder`'s allowance `allowance`.
    pub async fn spend(
        &self,
        holder: &str,
        keys: u64,
        bytes: u64,
        allowance: Allowance,
    ) -> Result<(), Refused> {
        let key = Self::key(holder);
        let window = self.ttl.as_millis() as u64;
        for _ in 0..8 {
            let now = now_ms();
            let updated = self
                .store
                .update_json(&key, 16, Some(self.ttl), |usage: &mut Usage| {
                    spend(usage, now, window, keys, bytes, allowance).map_err(Refused::Spent)
                })
                .await?;
            match updated {
                Updated::Done { .. } => return Ok(()),
                Updated::Contended => break,
                Updated::Missing => {
                    let mut usage = Usage {
                        since_ms: now,
                        ..Usage::default()
                    };
                    spend(&mut usage, now, window, keys, bytes, allowance)
                        .map_err(Refused::Spent)?;
                    if self.store.insert_json(&key, &usage, Some(self.ttl)).await? {
                        return Ok(());
                    }
                }
            }
        }
        Err(Refused::Store(StoreError::Unavailable(
            "idempotency allowance contended".into(),
        )))
    }
}

/// Whose allowances a new key spends.
pub struct Holders {
    pub principal: String,
    pub network: String,
}

impl Holders {
    /// Each holder with its allowance (a request without a token is its
    /// network's alone).
    fn with(&self, limits: Allowances) -> Vec<(&str, Allowance)> {
        let mut spends = vec![(self.principal.as_str(), limits.principal)];
        if self.network != self.principal {
            spends.push((self.network.as_str(), limits.network));
        }
        spends
    }
}

/// 429 for a new key past an allowance.
fn allowance_spent(retry_after: u64) -> Response {
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "RATE_LIMIT_EXCEEDED",
        format!(
            "too many Idempotency-Keys kept for this caller or network; \
             send new keys after {retry_after} s (repeats of kept keys still replay)"
        ),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    response
}

impl Allowed {
    /// Spends one new key of the principal's and the network's allowances.
    pub async fn spend_key(&self, holders: &Holders) -> Result<(), Response> {
        for (holder, allowance) in holders.with(self.limits) {
            match self.spend(holder, 1, 0, allowance).await {
                Ok(()) => {}
                Err(Refused::Spent(spent)) => return Err(allowance_spent(spent.retry_after)),
                Err(Refused::Store(e)) => {
                    tracing::warn!(error = %e, "idempotency allowance unavailable");
                    return Err(unavailable());
                }
            }
        }
        Ok(())
    }

    /// Counts a kept answer's bytes against both holders.
    pub async fn spend_bytes(&self, holders: &Holders, bytes: u64) {
        for (holder, allowance) in holders.with(self.limits) {
            if self.spend(holder, 0, bytes, allowance).await.is_err() {
                tracing::warn!("an idempotent answer's bytes were not counted");
            }
        }
    }
}

/// 503: the keys cannot be checked now (never run without the check).
pub fn unavailable() -> Response {
    let mut response = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "IDEMPOTENCY_UNAVAILABLE",
        "idempotency keys cannot be checked now; retry",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(1));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Allowance = Allowance {
        keys: 2,
        bytes: 100,
    };

    #[test]
    fn a_window_allows_its_keys_and_bytes_then_refuses_new_keys() {
        // As a holder's first key writes it: its window begins then.
        let mut usage = Usage {
            since_ms: 1_000,
            ..Usage::default()
        };
        assert!(spend(&mut usage, 1_000, 60_000, 1, 0, A).is_ok());
        assert!(spend(&mut usage, 1_000, 60_000, 0, 40, A).is_ok());
        assert!(spend(&mut usage, 2_000, 60_000, 1, 0, A).is_ok());
        let refused = spend(&mut usage, 3_000, 60_000, 1, 0, A);
        assert_eq!(refused, Err(Spent { retry_after: 58 }));
        // The window over, the allowance is whole again.
        assert!(spend(&mut usage, 61_000, 60_000, 1, 0, A).is_ok());
        // Bytes spent refuse a new key too, whatever the count.
        assert!(spend(&mut usage, 61_000, 60_000, 0, 100, A).is_ok());
        assert!(spend(&mut usage, 61_500, 60_000, 1, 0, A).is_err());
    }
}
