//! Failed password checks per account (`Scope::LoginEmail`). Only a login
//! that passed validation and the captcha and then failed its password
//! check counts, so a stranger's malformed requests cannot lock the owner
//! out. A counter per address lives in the shared store with its window as
//! TTL (a fixed window: at most `count` failures, then refused until the
//! window ends). The key is a hash of the normalised address, never the
//! raw text, so its size is fixed whatever the client sends.

use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest::{SHA256, digest};
use serde::{Deserialize, Serialize};
use storefront_platform::store::{Store, StoreError, Updated};

use super::{Decision, Quota, Scope};

#[derive(Serialize, Deserialize)]
struct Window {
    failures: u32,
    /// When the window ends, in ms since the epoch.
    until_ms: u64,
}

pub struct LoginFailures {
    quota: Option<Quota>,
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

fn key(email: &str) -> String {
    let hash = digest(&SHA256, email.as_bytes());
    let hex: String = hash.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("login-failures:{hex}")
}

impl LoginFailures {
    /// `quota` None: logins are not limited per account.
    pub fn new(quota: Option<Quota>, store: Store, fail_closed: bool) -> Self {
        Self {
            quota,
            store,
            fail_closed,
        }
    }

    fn decision(&self, quota: Quota, window: Option<&Window>, now: u64) -> Decision {
        let failures = window.map_or(0, |w| w.failures);
        let left_ms = window.map_or(0, |w| w.until_ms.saturating_sub(now));
        let allowed = failures < quota.count;
        Decision {
            scope: Scope::LoginEmail,
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

    /// The account's budget before a login is tried (nothing is counted);
    /// None when logins are not limited per account.
    pub async fn budget(&self, email: &str) -> Option<Decision> {
        let quota = self.quota?;
        let now = now_ms();
        match self.store.get_json::<Window>(&key(email)).await {
            Ok(found) => Some(self.decision(quota, found.map(|f| f.value).as_ref(), now)),
            Err(e) => Some(self.unavailable(quota, &e)),
        }
    }

    /// Counts one failed password check.
    pub async fn record(&self, email: &str) {
        let Some(quota) = self.quota else { return };
        let key = key(email);
        let window = Window {
            failures: 1,
            until_ms: now_ms() + quota.period.as_millis() as u64,
        };
        let counted = async {
            // A failure never extends the window: the update keeps its TTL.
            for _ in 0..2 {
                if self
                    .store
                    .insert_json(&key, &window, Some(quota.period))
                    .await?
                {
                    return Ok::<_, StoreError>(());
                }
                let counted = self
                    .store
                    .update_json(&key, 8, None, |w: &mut Window| {
                        w.failures = w.failures.saturating_add(1);
                        Ok::<_, StoreError>(())
                    })
                    .await?;
                if let Updated::Done { .. } = counted {
                    return Ok(());
                }
            }
            Ok(())
        };
        if let Err(e) = counted.await {
            tracing::warn!(error = %e, "a failed login could not be counted");
        }
    }

    fn unavailable(&self, quota: Quota, e: &StoreError) -> Decision {
        tracing::warn!(error = %e, fail_closed = self.fail_closed, "login failure budget unavailable");
        let mut d = self.decision(quota, None, 0);
        d.allowed = !self.fail_closed;
        d.unavailable = self.fail_closed;
        d.retry_after = u64::from(self.fail_closed);
        d
    }
}
