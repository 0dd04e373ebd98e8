//! A customer's sessions, bounded: an index per customer (each session's
//! id and start, its client and last use) in the store, moved by
//! compare-and-set. A login beyond `MAX_SESSIONS` ends the oldest session
//! rather than refusing the login: a customer who lost track of old
//! devices is never locked out, and the state per customer stays bounded.
//! Sessions past the refresh token's lifetime drop out of the index as it
//! is written; a session ended (logout, by the customer, a reused refresh
//! token, a password change) leaves it then.

use std::collections::BTreeMap;
use storefront_proto::error::codes;

use serde::{Deserialize, Serialize};
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::customers::v1::SessionInfo;

use crate::accounts::Accounts;
use crate::model::{now_ms, timestamp};

const MAX_ATTEMPTS: usize = 64;
/// Characters of a client's User-Agent kept.
const USER_AGENT_CHARS: usize = 256;

fn index_key(customer_id: &str) -> String {
    format!("sessions-of:{customer_id}")
}

#[derive(Serialize, Deserialize, Default, Clone)]
struct Started {
    /// (session id, started at ms), oldest first.
    sessions: Vec<(String, i64)>,
    /// By session id: what the list shows besides the start.
    #[serde(default)]
    details: BTreeMap<String, Detail>,
}

#[derive(Serialize, Deserialize, Default, Clone)]
struct Detail {
    #[serde(default)]
    user_agent: String,
    #[serde(default)]
    last_used_ms: i64,
}

fn contended() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        codes::CONCURRENT_MODIFICATION,
        "the customer's sessions are changing concurrently; retry",
    )
}

impl Accounts {
    /// Applies `change` to `customer_id`'s index (expired sessions
    /// dropped first) by compare-and-set; what `change` gives back.
    async fn change_index<R>(
        &self,
        customer_id: &str,
        mut change: impl FnMut(&mut Started) -> R,
    ) -> Result<R, ServiceError> {
        let key = index_key(customer_id);
        let ttl = Some(self.refresh_ttl);
        let lifetime = self.refresh_ttl.as_millis() as i64;
        for _ in 0..MAX_ATTEMPTS {
            let now = now_ms();
            let found = self.store.get_json::<Started>(&key).await?;
            let (version, mut index) = match found {
                Some(f) => (Some(f.version), f.value),
                None => (None, Started::default()),
            };
            index.sessions.retain(|(_, at)| now - at < lifetime);
            let result = change(&mut index);
            let Started { sessions, details } = &mut index;
            details.retain(|sid, _| sessions.iter().any(|(s, _)| s == sid));
            let written = match version {
                None => self.store.insert_json(&key, &index, ttl).await?,
                Some(v) => self
                    .store
                    .replace_json(&key, v, &index, ttl)
                    .await?
                    .is_some(),
            };
            if written {
                return Ok(result);
            }
        }
        Err(contended())
    }

    /// Records session `sid` of `customer_id`, ending the oldest sessions
    /// beyond the cap.
    pub(crate) async fn admit_session(
        &self,
        customer_id: &str,
        sid: &str,
        user_agent: &str,
    ) -> Result<(), ServiceError> {
        let max = self.max_sessions;
        let ended = self
            .change_index(customer_id, |index| {
                let now = now_ms();
                index.sessions.push((sid.to_string(), now));
                let detail = Detail {
                    user_agent: user_agent.chars().take(USER_AGENT_CHARS).collect(),
                    last_used_ms: now,
                };
                index.details.insert(sid.to_string(), detail);
                let over = index.sessions.len().saturating_sub(max);
                index
                    .sessions
                    .drain(..over)
                    .map(|(s, _)| s)
                    .collect::<Vec<_>>()
            })
            .await?;
        for old in &ended {
            self.revoke_session(old).await?;
        }
        if !ended.is_empty() {
            tracing::info!(
                customer_id,
                ended = ended.len(),
                "oldest sessions ended at the cap"
            );
        }
        Ok(())
    }

    /// Notes that session `sid` was used now (a token refresh); a session
    /// the index no longer holds is left out.
    pub(crate) async fn touch_session(&self, customer_id: &str, sid: &str) {
        let touched = self
            .change_index(customer_id, |index| {
                if let Some(detail) = index.details.get_mut(sid) {
                    detail.last_used_ms = now_ms();
                } else if index.sessions.iter().any(|(s, _)| s == sid) {
                    let detail = Detail {
                        last_used_ms: now_ms(),
                        ..Detail::default()
                    };
                    index.details.insert(sid.to_string(), detail);
                }
            })
            .await;
        if let Err(e) = touched {
            tracing::debug!(error = %e, "a session's last use was not recorded");
        }
    }

    /// Removes `sids` from `customer_id`'s index (their tokens are revoked
    /// by the caller); whether any was there.
    pub(crate) async fn forget_sessions(
        &self,
        customer_id: &str,
        sids: &[&str],
    ) -> Result<bool, ServiceError> {
        if customer_id.is_empty() || sids.is_empty() {
            return Ok(false);
        }
        self.change_index(customer_id, |index| {
            let before = index.sessions.len();
            index.sessions.retain(|(s, _)| !sids.contains(&s.as_str()));
            index.sessions.len() != before
        })
        .await
    }

    /// `customer_id`'s sessions, newest first; `current` marked.
    pub async fn list_sessions(
        &self,
        customer_id: &str,
        current: &str,
    ) -> Result<Vec<SessionInfo>, ServiceError> {
        let lifetime = self.refresh_ttl.as_millis() as i64;
        let now = now_ms();
        let index = self
            .store
            .get_json::<Started>(&index_key(customer_id))
            .await?
            .map(|f| f.value)
            .unwrap_or_default();
        Ok(index
            .sessions
            .iter()
            .rev()
            .filter(|(_, at)| now - at < lifetime)
            .map(|(sid, at)| {
                let detail = index.details.get(sid).cloned().unwrap_or_default();
                SessionInfo {
                    id: sid.clone(),
                    created_at: timestamp(*at),
                    last_used_at: timestamp(detail.last_used_ms.max(*at)),
                    user_agent: detail.user_agent,
                    current: sid == current,
                }
            })
            .collect())
    }

    /// The ids of `customer_id`'s open sessions.
    async fn open_sessions(&self, customer_id: &str) -> Result<Vec<String>, ServiceError> {
        Ok(self
            .list_sessions(customer_id, "")
            .await?
            .into_iter()
            .map(|s| s.id)
            .collect())
    }

    /// Ends session `sid` of `customer_id` (revoked, then unlisted): 404
    /// when it has no such open session.
    pub async fn end_session(&self, customer_id: &str, sid: &str) -> Result<(), ServiceError> {
        if !self
            .open_sessions(customer_id)
            .await?
            .iter()
            .any(|s| s == sid)
        {
            return Err(ServiceError::not_found("session", sid));
        }
        self.revoke_session(sid).await?;
        self.forget_sessions(customer_id, &[sid]).await?;
        Ok(())
    }

    /// Ends every session of `customer_id` but `keep` (revoked, then
    /// unlisted); how many.
    pub(crate) async fn end_other_sessions(
        &self,
        customer_id: &str,
        keep: &str,
    ) -> Result<usize, ServiceError> {
        let others: Vec<String> = self
            .open_sessions(customer_id)
            .await?
            .into_iter()
            .filter(|s| s != keep)
            .collect();
        for sid in &others {
            self.revoke_session(sid).await?;
        }
        let others: Vec<&str> = others.iter().map(String::as_str).collect();
        self.forget_sessions(customer_id, &others).await?;
        Ok(others.len())
    }
}
