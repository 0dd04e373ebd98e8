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
//!
//! Past its budget a network is slowed rather than locked for the rest of
//! the window: one more attempt after `SLOWED_FOR`, then after twice that
//! for each further failure. A stranger guessing behind the owner's NAT
//! (the same /24) then costs the owner a wait of seconds to minutes, not
//! the hour, while the stranger's guesses thin out to a few an hour.

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
    /// When the last failure was counted (0: a window written before it
    /// was kept, which stays closed to its end).
    #[serde(default)]
    last_ms: u64,
}

/// The first wait past a network's budget; each further failure doubles it.
const SLOWED_FOR: Duration = Duration::from_secs(30);

/// When a login may be tried again in `window` once its `count` failures
/// are used up: the window's end, or sooner while the network is slowed.
fn next_try_ms(window: &Window, count: u32, slowed: bool) -> u64 {
    if !slowed || window.last_ms == 0 {
        return window.until_ms;
    }
    let doublings = window.failures.saturating_sub(count).min(16);
    let wait = SLOWED_FOR.as_millis() as u64 * (1u64 << doublings);
    (window.last_ms + wait).min(window.until_ms)
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
        // The network's budget slows; the account's ceiling locks.
        let slowed = scope == Scope::LoginEmail;
        let next = window.map_or(0, |w| next_try_ms(w, quota.count, slowed));
        let left_ms = next.saturating_sub(now);
        let allowed = failures < quota.count || left_ms == 0;
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
        let now = now_ms();
        let window = Window {
            failures: 1,
            until_ms: now + quota.period.as_millis() as u64,
            last_ms: now,
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
                    w.last_ms = now;
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

#[cfg(test)]
mod tests {
    use super::*;

    const QUOTA: Quota = Quota {
        count: 3,
        period: Duration::from_secs(3600),
    };

    fn window(failures: u32, last_ms: u64) -> Window {
        Window {
            failures,
            until_ms: 3_600_000,
            last_ms,
        }
    }

    /// Past the budget a network waits 30 s, then 60, 120, ... after its
    /// last failure, never past the window; the account's ceiling locks.
    #[test]
    fn past_its_budget_a_network_is_slowed_not_locked() {
        let at = |failures, last, now| {
            let d = LoginFailures::decision(
                Scope::LoginEmail,
                QUOTA,
                Some(&window(failures, last)),
                now,
            );
            (d.allowed, d.retry_after)
        };
        assert_eq!(at(2, 1_000, 1_000), (true, 0));
        assert_eq!(at(3, 1_000, 1_000), (false, 30));
        assert_eq!(at(3, 1_000, 31_000), (true, 0));
        assert_eq!(at(4, 40_000, 40_000), (false, 60));
        assert_eq!(at(6, 40_000, 40_000), (false, 240));
        assert_eq!(
            at(40, 3_500_000, 3_500_000),
            (false, 100),
            "never past the window"
        );
        // A window kept before `last_ms` stays closed to its end.
        assert_eq!(at(3, 0, 10_000).1, 3_590);
        let ceiling =
            LoginFailures::decision(Scope::LoginAccount, QUOTA, Some(&window(3, 1_000)), 60_000);
        assert!(!ceiling.allowed);
    }
}
