//! Tokens verified recently, so that a session's every request does not
//! verify the same ES256 signature again (about 6% of a cart write's CPU,
//! measured). What a hit skips is only the signature and the fixed
//! claims: expiry is checked again on every hit, revocation is checked on
//! every request by the caller, and an entry lives at most [`KEEP`], far
//! less than the signing keys are trusted without a refetch (15 min), so
//! a key withdrawn by rotation stops being honoured as fast as before.
//!
//! Bounded whatever the traffic: only tokens whose signature verified are
//! kept (so only what the issuer signed), at most [`CAPACITY`] of them;
//! a full shard drops its expired entries, or all of them.

use std::time::Duration;

use storefront_domain::customer_token::CustomerClaims;
use storefront_platform::recent::Recent;

/// How long a verification is reused.
pub const KEEP: Duration = Duration::from_secs(60);
/// Tokens kept, over all shards.
pub const CAPACITY: usize = 16_384;

pub struct TokenCache(Recent<CustomerClaims>);

impl Default for TokenCache {
    fn default() -> Self {
        Self(Recent::new(KEEP, CAPACITY))
    }
}

impl TokenCache {
    /// The claims `token` verified to within [`KEEP`], if still unexpired
    /// at `now_unix` (seconds, with the validation's `leeway`).
    pub fn get(&self, token: &str, now_unix: u64, leeway: u64) -> Option<CustomerClaims> {
        self.0
            .get(token)
            .filter(|claims| now_unix <= claims.exp + leeway)
    }

    /// Keeps `claims`, which `token` was just verified to carry.
    pub fn put(&self, token: &str, claims: &CustomerClaims) {
        self.0.put(token, claims.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(sid: &str, exp: u64) -> CustomerClaims {
        CustomerClaims {
            iss: "i".into(),
            aud: "a".into(),
            sub: "c-1".into(),
            jti: format!("j-{sid}"),
            sid: sid.into(),
            iat: 0,
            exp,
            scope: None,
        }
    }

    #[test]
    fn a_token_is_reused_until_it_expires() {
        let cache = TokenCache::default();
        cache.put("t1", &claims("s1", 1_000));
        assert_eq!(cache.get("t1", 1_000, 5).map(|c| c.sid), Some("s1".into()));
        assert_eq!(cache.get("t1", 1_005, 5).map(|c| c.sid), Some("s1".into()));
        assert!(cache.get("t1", 1_006, 5).is_none(), "expired");
        assert!(cache.get("t2", 0, 5).is_none(), "never verified");
    }

    #[test]
    fn it_never_holds_more_than_its_capacity() {
        let cache = TokenCache::default();
        for n in 0..CAPACITY * 3 {
            cache.put(&format!("token-{n}"), &claims("s", u64::MAX / 2));
        }
        let held = cache.0.len();
        assert!(held <= CAPACITY, "{held}");
        let last = format!("token-{}", CAPACITY * 3 - 1);
        assert!(cache.get(&last, 0, 0).is_some(), "the newest is kept");
    }
}
