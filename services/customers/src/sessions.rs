//! How many sessions a customer has, bounded: an index per customer (each
//! session's id and start) in the store, moved by compare-and-set. A login
//! beyond `MAX_SESSIONS` ends the oldest session rather than refusing the
//! login: a customer who lost track of old devices is never locked out,
//! and the state per customer stays bounded. Sessions past the refresh
//! token's lifetime drop out of the index as it is written.

use serde::{Deserialize, Serialize};
use storefront_platform::error::{ErrorKind, ServiceError};

use crate::accounts::Accounts;
use crate::model::now_ms;

const MAX_ATTEMPTS: usize = 64;

fn index_key(customer_id: &str) -> String {
    format!("sessions-of:{customer_id}")
}

#[derive(Serialize, Deserialize, Default)]
struct Started {
    /// (session id, started at ms), oldest first.
    sessions: Vec<(String, i64)>,
}

impl Accounts {
    /// Records session `sid` of `customer_id`, ending the oldest sessions
    /// beyond the cap.
    pub(crate) async fn admit_session(
        &self,
        customer_id: &str,
        sid: &str,
    ) -> Result<(), ServiceError> {
        let key = index_key(customer_id);
        let ttl = Some(self.refresh_ttl);
        let now = now_ms();
        let lifetime = self.refresh_ttl.as_millis() as i64;
        for _ in 0..MAX_ATTEMPTS {
            let found = self.store.get_json::<Started>(&key).await?;
            let (version, mut index) = match found {
                Some(f) => (Some(f.version), f.value),
                None => (None, Started::default()),
            };
            index.sessions.retain(|(_, at)| now - at < lifetime);
            index.sessions.push((sid.to_string(), now));
            let over = index.sessions.len().saturating_sub(self.max_sessions);
            let ended: Vec<String> = index.sessions.drain(..over).map(|(s, _)| s).collect();
            let written = match version {
                None => self.store.insert_json(&key, &index, ttl).await?,
                Some(v) => self
                    .store
                    .replace_json(&key, v, &index, ttl)
                    .await?
                    .is_some(),
            };
            if written {
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
                return Ok(());
            }
        }
        Err(ServiceError::new(
            ErrorKind::Conflict,
            "CONCURRENT_MODIFICATION",
            "logins are happening concurrently; retry",
        ))
    }
}
