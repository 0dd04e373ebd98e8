//! The rate limiter's one script: GCRA, decided by Redis's own clock so
//! that every replica agrees.

use super::{RedisStore, StoreError, unavailable};

/// GCRA in one round trip. KEYS[1] the key; ARGV[1] the emission interval
/// T (ms), ARGV[2] the burst tolerance tau (ms). Redis's own clock, so every
/// replica agrees. Returns {allowed, retry_after_ms, remaining, reset_ms}.
pub(super) const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if now < tat - tau then
  return {0, tat - tau - now, 0, tat - now}
end
local next = tat + interval
redis.call('SET', KEYS[1], next, 'PX', next - now + 1)
local remaining = math.floor((now + tau - next) / interval) + 1
if remaining < 0 then remaining = 0 end
return {1, 0, remaining, next - now}";

/// One rate-limit decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcraOutcome {
    pub allowed: bool,
    pub retry_after_ms: u64,
    pub remaining: u64,
    pub reset_ms: u64,
}

impl RedisStore {
    /// Counts one request against `key` (GCRA: `interval_ms` per request,
    /// bursts up to `tau_ms / interval_ms + 1`).
    pub async fn gcra(
        &self,
        key: &str,
        interval_ms: u64,
        tau_ms: u64,
    ) -> Result<GcraOutcome, StoreError> {
        let mut conn = self.conn.clone();
        let (allowed, retry_after_ms, remaining, reset_ms): (i64, i64, i64, i64) = self
            .scripts
            .gcra
            .key(self.key(key))
            .arg(interval_ms)
            .arg(tau_ms)
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)?;
        let u = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(GcraOutcome {
            allowed: allowed == 1,
            retry_after_ms: u(retry_after_ms),
            remaining: u(remaining),
            reset_ms: u(reset_ms),
        })
    }
}
