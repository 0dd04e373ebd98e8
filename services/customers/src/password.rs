//! Password policy and argon2id hashing, off the async threads.

use std::sync::Arc;
use std::time::Duration;
use storefront_proto::error::codes;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub const MIN_LENGTH: usize = 10;
pub const MAX_LENGTH: usize = 128;

/// Problems with a new password, as field violations on `password`.
pub fn policy(password: &str, email: &str) -> Option<FieldViolation> {
    let chars = password.chars().count();
    let message = if password.is_empty() {
        return Some(FieldViolation::new(
            "password",
            codes::REQUIRED,
            "a password is required",
        ));
    } else if chars < MIN_LENGTH {
        format!("use at least {MIN_LENGTH} characters")
    } else if chars > MAX_LENGTH {
        format!("use at most {MAX_LENGTH} characters")
    } else if password.eq_ignore_ascii_case(email)
        || password.chars().all(|c| password.starts_with(c))
        || sequential(password)
    {
        "choose a password that is harder to guess".to_string()
    } else {
        return None;
    };
    Some(FieldViolation::new(
        "password",
        codes::INVALID_VALUE,
        message,
    ))
}

/// A run of consecutive characters, up or down (`1234567890`, `zyxwvu...`),
/// digits wrapping from 9 to 0. No composition rule beyond these
/// (NIST SP 800-63B 5.1.1.2: length, not character classes, makes a
/// password strong; refuse repetitive and sequential ones).
fn sequential(password: &str) -> bool {
    let step = |a: char, b: char, up: bool| {
        let (a, b) = if up { (a, b) } else { (b, a) };
        u32::from(b) == u32::from(a) + 1 || (a == '9' && b == '0')
    };
    let pairs = || password.chars().zip(password.chars().skip(1));
    pairs().all(|(a, b)| step(a, b, true)) || pairs().all(|(a, b)| step(a, b, false))
}

/// How many hashes may run at once, and how long one waits for its turn:
/// each takes `ARGON2_MEMORY_KIB`, so a burst of logins is bounded in
/// memory, not in the blocking pool's 512 threads.
/// Argon2id's cost (`ARGON2_MEMORY_KIB`, `ARGON2_ITERATIONS`,
/// `ARGON2_PARALLELISM`).
#[derive(Debug, Clone, Copy)]
pub struct Argon2Params {
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
}

#[derive(Debug, Clone, Copy)]
pub struct Concurrency {
    pub at_once: usize,
    pub wait: Duration,
}

fn busy() -> ServiceError {
    ServiceError::new(
        ErrorKind::Unavailable,
        "PASSWORD_CHECKS_BUSY",
        "too many password checks at once; retry shortly",
    )
}

#[derive(Clone)]
pub struct Hasher {
    argon2: Arc<Argon2<'static>>,
    /// Verified against when the email is unknown, so that answer takes as
    /// long as a wrong password.
    dummy: Arc<str>,
    turns: Arc<Semaphore>,
    wait: Duration,
}

impl Hasher {
    pub fn new(p: Argon2Params, concurrency: Concurrency) -> anyhow::Result<Self> {
        let params = Params::new(p.memory_kib, p.iterations, p.parallelism, None)
            .map_err(|e| anyhow::anyhow!("argon2 parameters: {e}"))?;
        let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let dummy = argon2
            .hash_password(b"dummy password for unknown accounts")
            .map_err(|e| anyhow::anyhow!("argon2: {e}"))?
            .to_string();
        Ok(Self {
            argon2: Arc::new(argon2),
            dummy: dummy.into(),
            turns: Arc::new(Semaphore::new(concurrency.at_once.max(1))),
            wait: concurrency.wait,
        })
    }

    /// A turn at hashing, or 503 `PASSWORD_CHECKS_BUSY` after `wait`.
    async fn turn(&self) -> Result<OwnedSemaphorePermit, ServiceError> {
        let turn = self.turns.clone().acquire_owned();
        match tokio::time::timeout(self.wait, turn).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(busy()),
        }
    }

    pub async fn hash(&self, password: String) -> Result<String, ServiceError> {
        let argon2 = self.argon2.clone();
        let turn = self.turn().await?;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            argon2
                .hash_password(password.as_bytes())
                .map(|h| h.to_string())
        })
        .await
        .map_err(|_| ServiceError::internal("hashing task failed"))?
        .map_err(|_| ServiceError::internal("password hashing failed"))
    }

    /// Whether `password` matches `hash`; with no hash, checks a dummy and
    /// answers false after the same work.
    pub async fn verify(
        &self,
        password: String,
        hash: Option<String>,
    ) -> Result<bool, ServiceError> {
        let argon2 = self.argon2.clone();
        let known = hash.is_some();
        let hash = hash.unwrap_or_else(|| self.dummy.to_string());
        let turn = self.turn().await?;
        let matched = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            PasswordHash::new(&hash)
                .is_ok_and(|parsed| argon2.verify_password(password.as_bytes(), &parsed).is_ok())
        })
        .await
        .unwrap_or(false);
        Ok(known && matched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Argon2Params {
        Argon2Params {
            memory_kib: 8 * 1024,
            iterations: 1,
            parallelism: 1,
        }
    }

    #[test]
    fn the_policy_explains_itself() {
        assert!(policy("correct horse 9", "a@b.co").is_none());
        assert_eq!(policy("", "a@b.co").unwrap().code, "REQUIRED");
        // Length, not character classes: a long phrase of letters is fine.
        assert!(policy("onlyletterslong", "a@b.co").is_none());
        assert!(policy("5551234567890", "a@b.co").is_none());
        for weak in [
            "short1",
            "12345678901",
            "0987654321",
            "abcdefghijkl",
            "aaaaaaaaaaaaa",
            "a@b.co.a@b.co",
        ] {
            assert_eq!(
                policy(weak, "a@b.co.a@b.co").unwrap().code,
                "INVALID_VALUE",
                "{weak}"
            );
        }
        assert!(policy(&"x1".repeat(65), "a@b.co").is_some());
    }

    const ROOMY: Concurrency = Concurrency {
        at_once: 4,
        wait: Duration::from_secs(5),
    };

    #[tokio::test]
    async fn hashes_are_argon2id_and_verify() {
        let hasher = Hasher::new(params(), ROOMY).unwrap();
        let hash = hasher.hash("correct horse 9".into()).await.unwrap();
        assert!(hash.starts_with("$argon2id$v=19$m=8192,t=1,p=1$"));
        let verify = async |password: &str, hash: Option<String>| {
            hasher.verify(password.into(), hash).await.unwrap()
        };
        assert!(verify("correct horse 9", Some(hash.clone())).await);
        assert!(!verify("wrong horse 9", Some(hash)).await);
        assert!(!verify("dummy password for unknown accounts", None).await);
    }

    /// Two at a time, a short wait: of twelve checks at once, those past
    /// the wait are 503 PASSWORD_CHECKS_BUSY; none runs beyond the two.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checks_beyond_the_bound_wait_then_are_refused() {
        let slow = Argon2Params {
            memory_kib: 8 * 1024,
            iterations: 8,
            parallelism: 1,
        };
        let bound = Concurrency {
            at_once: 2,
            wait: Duration::from_millis(20),
        };
        let hasher = Hasher::new(slow, bound).unwrap();
        let checks = (0..12).map(|_| {
            let hasher = hasher.clone();
            tokio::spawn(async move { hasher.verify("correct horse 9".into(), None).await })
        });
        let results = futures::future::join_all(checks).await;
        let busy = results
            .iter()
            .filter(|r| matches!(r, Ok(Err(e)) if e.code == "PASSWORD_CHECKS_BUSY"))
            .count();
        let done = results
            .iter()
            .filter(|r| matches!(r, Ok(Ok(false))))
            .count();
        assert_eq!(busy + done, 12);
        assert!(busy > 0 && done >= 2, "{busy} refused, {done} done");
        assert_eq!(hasher.turns.available_permits(), 2, "every turn given back");
    }
}
