//! One decision per (scope, key): in process with governor, or shared in
//! Redis with a GCRA script; Redis unreachable fails open or closed.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota as GQuota, RateLimiter};
use storefront_platform::store::Store;

pub use crate::budget::Scope;

/// `count` requests per `period`, all of them at once if need be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub count: u32,
    pub period: Duration,
}

impl std::str::FromStr for Quota {
    type Err = String;
    /// `120/60s`, `10/1h`, `5/2m`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?}: expected count/period such as 120/60s, 10/1h");
        let (count, period) = s.split_once('/').ok_or_else(bad)?;
        let count: u32 = count
            .trim()
            .parse()
            .ok()
            .filter(|c| *c > 0)
            .ok_or_else(bad)?;
        let period = period.trim();
        let (n, unit) = period.split_at(
            period
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(period.len()),
        );
        let n: u64 = n.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
        let secs = match unit {
            "" | "s" => n,
            "m" => n * 60,
            "h" => n * 3600,
            _ => return Err(bad()),
        };
        Ok(Self {
            count,
            period: Duration::from_secs(secs),
        })
    }
}

impl Quota {
    fn interval(&self) -> Duration {
        self.period / self.count
    }

    /// The IETF `RateLimit-Policy` item.
    pub fn policy(&self, scope: Scope) -> String {
        format!(
            "\"{}\";q={};w={}",
            scope.name(),
            self.count,
            self.period.as_secs()
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub scope: Scope,
    pub quota: Quota,
    pub allowed: bool,
    pub remaining: u64,
    /// Whole seconds until a request would be allowed (0 when allowed).
    pub retry_after: u64,
    /// Whole seconds until the quota is whole again.
    pub reset: u64,
    /// The limiter could not decide (Redis away) and the scope fails closed.
    pub unavailable: bool,
}

type Keyed =
    RateLimiter<String, DefaultKeyedStateStore<String>, DefaultClock, StateInformationMiddleware>;

enum Backend {
    Local(HashMap<Scope, Keyed>),
    Redis(storefront_platform::store::RedisStore),
}

pub struct Limiter {
    quotas: HashMap<Scope, Quota>,
    backend: Backend,
    /// Scopes refused, not waved through, while Redis is away.
    fail_closed: HashSet<Scope>,
}

fn ceil_secs(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

impl Limiter {
    /// Limits shared through `store` when it is Redis, else per process.
    pub fn new(
        quotas: HashMap<Scope, Quota>,
        store: &Store,
        fail_closed: HashSet<Scope>,
    ) -> Arc<Self> {
        let backend = match store {
            Store::Redis(r) => Backend::Redis(r.clone()),
            // Per account, logins count failures, not requests (`failures`).
            Store::Memory(_) => Backend::Local(
                quotas
                    .iter()
                    .filter(|(scope, _)| !matches!(scope, Scope::LoginEmail | Scope::LoginAccount))
                    .map(|(scope, q)| {
                        let burst = NonZeroU32::new(q.count).unwrap_or(NonZeroU32::MIN);
                        let quota = GQuota::with_period(q.interval())
                            .unwrap_or_else(|| GQuota::per_second(burst))
                            .allow_burst(burst);
                        (
                            *scope,
                            RateLimiter::keyed(quota)
                                .with_middleware::<StateInformationMiddleware>(),
                        )
                    })
                    .collect(),
            ),
        };
        Arc::new(Self {
            quotas,
            backend,
            fail_closed,
        })
    }

    /// Forgets the in-process state of keys whose budget is whole again,
    /// in every scope, so memory follows active clients (`serve` runs it
    /// on a timer).
    pub fn prune(&self) {
        if let Backend::Local(limiters) = &self.backend {
            for limiter in limiters.values() {
                limiter.retain_recent();
                limiter.shrink_to_fit();
            }
        }
    }

    /// Keys held in process, over every scope.
    pub fn keys_held(&self) -> usize {
        match &self.backend {
            Backend::Local(limiters) => limiters.values().map(|l| l.len()).sum(),
            Backend::Redis(_) => 0,
        }
    }

    pub fn quota(&self, scope: Scope) -> Option<Quota> {
        self.quotas.get(&scope).copied()
    }

    /// Counts one request of `key` in `scope`; None when the scope is not limited.
    pub async fn check(&self, scope: Scope, key: &str) -> Option<Decision> {
        let quota = self.quota(scope)?;
        let decision = |allowed, remaining, retry_after, reset| Decision {
            scope,
            quota,
            allowed,
            remaining,
            retry_after,
            reset,
            unavailable: false,
        };
        match &self.backend {
            Backend::Local(limiters) => {
                let limiter = limiters.get(&scope)?;
                let interval = quota.interval().as_millis() as u64;
                Some(match limiter.check_key(&key.to_string()) {
                    Ok(state) => {
                        let remaining = u64::from(state.remaining_burst_capacity());
                        decision(
                            true,
                            remaining,
                            0,
                            ceil_secs(interval * (u64::from(quota.count) - remaining)),
                        )
                    }
                    Err(not_until) => {
                        let wait = not_until.wait_time_from(DefaultClock::default().now());
                        let retry = ceil_secs(wait.as_millis() as u64).max(1);
                        decision(
                            false,
                            0,
                            retry,
                            ceil_secs(interval * u64::from(quota.count)),
                        )
                    }
                })
            }
            Backend::Redis(redis) => {
                let interval = (quota.interval().as_millis() as u64).max(1);
                let tau = interval * u64::from(quota.count.saturating_sub(1));
                match redis
                    .gcra(&format!("rl:{}:{key}", scope.name()), interval, tau)
                    .await
                {
                    Ok(o) => Some(decision(
                        o.allowed,
                        o.remaining,
                        ceil_secs(o.retry_after_ms).max(u64::from(!o.allowed)),
                        ceil_secs(o.reset_ms),
                    )),
                    Err(e) => {
                        let closed = self.fail_closed.contains(&scope);
                        tracing::warn!(error = %e, scope = scope.name(), fail_closed = closed, "rate limiter unavailable");
                        let mut d = decision(!closed, u64::from(quota.count), u64::from(closed), 0);
                        d.unavailable = closed;
                        Some(d)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_parse() {
        assert_eq!(
            "120/60s".parse::<Quota>().unwrap(),
            Quota {
                count: 120,
                period: Duration::from_secs(60)
            }
        );
        assert_eq!(
            "10/1h".parse::<Quota>().unwrap().period,
            Duration::from_secs(3600)
        );
        assert_eq!(
            "5/2m".parse::<Quota>().unwrap().period,
            Duration::from_secs(120)
        );
        for bad in ["", "10", "0/60s", "10/0s", "10/5d", "x/60"] {
            assert!(bad.parse::<Quota>().is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_local_budget_is_exact() {
        let quotas = HashMap::from([(Scope::Ip, "3/60s".parse().unwrap())]);
        let limiter = Limiter::new(quotas, &Store::memory(), HashSet::new());
        let mut remaining = Vec::new();
        for _ in 0..3 {
            let d = limiter.check(Scope::Ip, "a").await.unwrap();
            assert!(d.allowed);
            remaining.push(d.remaining);
        }
        assert_eq!(remaining, [2, 1, 0]);
        let denied = limiter.check(Scope::Ip, "a").await.unwrap();
        assert!(!denied.allowed && denied.retry_after >= 1 && denied.retry_after <= 20);
        assert!(
            limiter.check(Scope::Ip, "b").await.unwrap().allowed,
            "keys are separate"
        );
        assert!(
            limiter.check(Scope::Search, "a").await.is_none(),
            "unconfigured scopes are not limited"
        );
    }

    #[tokio::test]
    async fn pruning_forgets_keys_whose_budget_is_whole_again() {
        let quotas = HashMap::from([(Scope::Ip, "3/1s".parse().unwrap())]);
        let limiter = Limiter::new(quotas, &Store::memory(), HashSet::new());
        for key in ["a", "b", "c"] {
            limiter.check(Scope::Ip, key).await.unwrap();
        }
        limiter.prune();
        assert_eq!(limiter.keys_held(), 3, "budgets still in use are kept");
        // governor forgets a key once its next arrival is an interval past.
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        limiter.prune();
        assert_eq!(limiter.keys_held(), 0);
    }
}
