//! Failed password checks per account. Only a login that passed
//! validation and the captcha and then failed its password check counts,
//! so a stranger's malformed requests cannot lock the owner out; and the
//! budget is per account *and client network* (`Scope::LoginEmail`, an
//! IPv4 /24 or an IPv6 /64), so a stranger's guesses from elsewhere
//! cannot lock the owner out either. Across all networks an account has a
//! higher ceiling (`Scope::LoginAccount`): past it, only networks the
//! account logged in from before (its usual ones, remembered 90 days) may
//! still try; guessing from new networks stops. Each budget is a counter
//! in the shared store with its window as TTL (a fixed window). Keys are
//! hashes of the normalised address (and network), never the raw text.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest::{SHA256, digest};
use serde::{Deserialize, Serialize};
use storefront_platform::store::{Store, StoreError, Updated};

use super::{Decision, Quota, Scope};

#[derive(Clone, Serialize, Deserialize)]
struct Window {
    failures: u32,
    /// When the window ends, in ms since the epoch.
    until_ms: u64,
}

/// How long a network an account logged in from stays its usual one.
const USUAL_FOR: Duration = Duration::from_secs(90 * 24 * 3600);

pub struct LoginFailures {
    /// Per account and network.
    quota: Option<Quota>,
    /// Per account, over every network.
    ceiling: Option<Quota>,
    store: Store,
    fail_closed: bool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The address as the customers service looks it up.
pub fn normalise(email: &str) -> String {
    email.trim().to_lowercase()
}

/// A fixed-size hash of `parts`, for keys and logs.
fn hashed(parts: &[&str]) -> String {
    let joined = parts.join("\n");
    let hash = digest(&SHA256, joined.as_bytes());
    hash.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn key(kind: &str, parts: &[&str]) -> String {
    format!("login-{kind}:{}", hashed(parts))
}

impl LoginFailures {
    /// `quota` None: logins are not limited per account and network;
    /// `ceiling` None: no ceiling over all networks.
    pub fn new(
        quota: Option<Quota>,
        ceiling: Option<Quota>,
        store: Store,
        fail_closed: bool,
    ) -> Self {
        Self {
            quota,
            ceiling,
            store,
            fail_closed,
        }
    }

    fn decision(scope: Scope, quota: Quota, window: Option<&Window>, now: u64) -> Decision {
        let failures = window.map_or(0, |w| w.failures);
        let left_ms = window.map_or(0, |w| w.until_ms.saturating_sub(now));
        let allowed = failures < quota.count;
        Decision {
            scope,
            quota,
            allowed,
            remaining: u64::from(quota.count.saturating_sub(failures)),
            retry_after: if allowed {
                0
            } else {
                left_ms.div_ceil(1000).max(1)
            },
            reset: left_ms.div_ceil(1000),
            unavailable: false,
        }
    }

    async fn window(&self, key: &str) -> Result<Option<Window>, StoreError> {
        Ok(self.store.get_json::<Window>(key).await?.map(|f| f.value))
    }

    /// The budget a login for `email` from `network` may spend before it
    /// is tried (nothing is counted); None when logins are not limited
    /// per account.
    pub async fn budget(&self, email: &str, network: &str) -> Option<Decision> {
        let quota = self.quota?;
        let now = now_ms();
        let local = match self.window(&key("failures", &[email, network])).await {
            Ok(w) => Self::decision(Scope::LoginEmail, quota, w.as_ref(), now),
            Err(e) => return Some(self.unavailable(Scope::LoginEmail, quota, &e)),
        };
        let Some(ceiling) = self.ceiling.filter(|_| local.allowed) else {
            return Some(local);
        };
        let all = match self.window(&key("failures", &[email])).await {
            Ok(w) => Self::decision(Scope::LoginAccount, ceiling, w.as_ref(), now),
            Err(e) => return Some(self.unavailable(Scope::LoginAccount, ceiling, &e)),
        };
        if all.allowed || self.usual(email, network).await {
            return Some(local);
        }
        Some(all)
    }

    async fn usual(&self, email: &str, network: &str) -> bool {
        let usual = key("usual", &[email, network]);
        self.store.exists_any(&[&usual]).await.unwrap_or(false)
    }

    /// Remembers `network` as one `email` logs in from.
    pub async fn succeeded(&self, email: &str, network: &str) {
        if self.ceiling.is_none() {
            return;
        }
        let usual = key("usual", &[email, network]);
        if let Err(e) = self.store.insert(&usual, b"1", Some(USUAL_FOR)).await {
            tracing::warn!(error = %e, "a login's network could not be remembered");
        }
    }

    /// Counts one failed password check, in the account's budget for
    /// `network` and in its ceiling; logs a notice (the account as a hash,
    /// never the address) when either is used up.
    pub async fn record(&self, email: &str, network: &str) {
        for (quota, scope, key) in [
            (
                self.quota,
                Scope::LoginEmail,
                key("failures", &[email, network]),
            ),
            (self.ceiling, Scope::LoginAccount, key("failures", &[email])),
        ] {
            let Some(quota) = quota else { continue };
            match self.count(&key, quota).await {
                Ok(failures) if failures == quota.count => tracing::warn!(
                    account = %hashed(&[email]),
                    network,
                    scope = scope.name(),
                    "failed logins used up an account's budget"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "a failed login could not be counted"),
            }
        }
    }

    /// One more failure in the window at `key`; the failures counted.
    async fn count(&self, key: &str, quota: Quota) -> Result<u32, StoreError> {
        let window = Window {
            failures: 1,
            until_ms: now_ms() + quota.period.as_millis() as u64,
        };
        // A failure never extends the window: the update keeps its TTL.
        for _ in 0..2 {
            if self
                .store
                .insert_json(key, &window, Some(quota.period))
                .await?
            {
                return Ok(1);
            }
            let updated = self
                .store
                .update_json(key, 8, None, |w: &mut Window| {
                    w.failures = w.failures.saturating_add(1);
                    Ok::<_, StoreError>(w.failures)
                })
                .await?;
            if let Updated::Done { result, .. } = updated {
                return Ok(result);
            }
        }
        Ok(0)
    }

    fn unavailable(&self, scope: Scope, quota: Quota, e: &StoreError) -> Decision {
        tracing::warn!(error = %e, fail_closed = self.fail_closed, "login failure budget unavailable");
        let mut d = Self::decision(scope, quota, None, 0);
        d.allowed = !self.fail_closed;
        d.unavailable = self.fail_closed;
        d.retry_after = u64::from(self.fail_closed);
        d
    }
}
