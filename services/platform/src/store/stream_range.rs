//! Reading a stream by position, for readers without a consumer group: a
//! back office paging through `GET /internal/events`, a webhook retry
//! fetching the one event it retries. A position is an entry's id
//! (`<ms>-<seq>`); anything else is refused before the store sees it.
//! And what a group's reader that stopped left unacknowledged, claimed by
//! another.

use redis::Value;

use super::events::{MemoryEvents, StreamEntry, entry_list};
use super::{Store, StoreError};
use crate::telemetry::metrics::time_store;

/// Whether `position` is a stream entry's id.
pub fn is_position(position: &str) -> bool {
    let Some((ms, seq)) = position.split_once('-') else {
        return false;
    };
    let number = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    number(ms) && number(seq) && ms.parse::<u64>().is_ok() && seq.parse::<u64>().is_ok()
}

fn refused(position: &str) -> StoreError {
    StoreError::Corrupt(format!("not a stream position: {:.40}", position))
}

impl Store {
    /// Up to `count` entries of `stream` after `after` (an entry's id,
    /// not included; empty: from the oldest kept), oldest first.
    pub async fn stream_after(
        &self,
        stream: &str,
        after: &str,
        count: usize,
    ) -> Result<Vec<StreamEntry>, StoreError> {
        if !after.is_empty() && !is_position(after) {
            return Err(refused(after));
        }
        match self {
            Store::Memory(m) => Ok(m.events().after(stream, after, count)),
            Store::Redis(r) => {
                let key = r.key(stream);
                let start = match after {
                    "" => "-".to_string(),
                    after => format!("({after}"),
                };
                let mut cmd = redis::cmd("XRANGE");
                cmd.arg(&key).arg(start).arg("+").arg("COUNT").arg(count);
                let reply: Value = time_store("stream_range", r.command(&cmd, &key, false)).await?;
                Ok(entry_list(reply))
            }
        }
    }

    /// The entry of `stream` at `position`, while the stream keeps it.
    pub async fn stream_at(
        &self,
        stream: &str,
        position: &str,
    ) -> Result<Option<StreamEntry>, StoreError> {
        if !is_position(position) {
            return Err(refused(position));
        }
        match self {
            Store::Memory(m) => Ok(m.events().at(stream, position)),
            Store::Redis(r) => {
                let key = r.key(stream);
                let mut cmd = redis::cmd("XRANGE");
                cmd.arg(&key)
                    .arg(position)
                    .arg(position)
                    .arg("COUNT")
                    .arg(1);
                let reply: Value = time_store("stream_range", r.command(&cmd, &key, false)).await?;
                Ok(entry_list(reply).into_iter().next())
            }
        }
    }
}

impl Store {
    /// Up to `count` entries of `stream` that `group` was given but has
    /// not acknowledged for `min_idle` or longer (a reader stopped between
    /// reading and acknowledging), now `consumer`'s. In memory a reader
    /// stops only with its process, which takes the stream along: none.
    pub async fn stream_claim_idle(
        &self,
        stream: &str,
        group: &str,
        consumer: &str,
        min_idle: std::time::Duration,
        count: usize,
    ) -> Result<Vec<StreamEntry>, StoreError> {
        match self {
            Store::Memory(_) => Ok(Vec::new()),
            Store::Redis(r) => {
                let key = r.key(stream);
                let mut cmd = redis::cmd("XAUTOCLAIM");
                cmd.arg(&key).arg(group).arg(consumer);
                cmd.arg(min_idle.as_millis() as u64)
                    .arg("0-0")
                    .arg("COUNT")
                    .arg(count);
                let reply: Value = match r.command(&cmd, &key, false).await {
                    Ok(reply) => reply,
                    // No group yet: nothing was ever given.
                    Err(e) if e.to_string().contains("NOGROUP") => return Ok(Vec::new()),
                    Err(e) => return Err(e),
                };
                // [next start, [entries], [ids deleted meanwhile]]
                let Value::Array(parts) = reply else {
                    return Ok(Vec::new());
                };
                Ok(parts.into_iter().nth(1).map(entry_list).unwrap_or_default())
            }
        }
    }
}

/// The sequence a memory stream's id ends with.
fn sequence(position: &str) -> u64 {
    position
        .rsplit_once('-')
        .and_then(|(_, seq)| seq.parse().ok())
        .unwrap_or(0)
}

impl MemoryEvents {
    fn after(&self, stream: &str, after: &str, count: usize) -> Vec<StreamEntry> {
        let Some(log) = self.streams.get(stream) else {
            return Vec::new();
        };
        let after = if after.is_empty() { 0 } else { sequence(after) };
        let start = log.entries.partition_point(|(seq, _)| *seq <= after);
        log.entries
            .range(start..)
            .take(count)
            .map(|(_, entry)| entry.clone())
            .collect()
    }

    fn at(&self, stream: &str, position: &str) -> Option<StreamEntry> {
        let log = self.streams.get(stream)?;
        let seq = sequence(position);
        let at = log.entries.partition_point(|(s, _)| *s < seq);
        log.entries
            .get(at)
            .filter(|(_, entry)| entry.id == position)
            .map(|(_, entry)| entry.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_pages_by_position_and_refuses_what_is_not_one() {
        let store = Store::memory();
        let mut ids = Vec::new();
        for i in 0..5u8 {
            ids.push(store.stream_add("s", &[("n", &[i])], 4).await.unwrap());
        }
        let first = store.stream_after("s", "", 2).await.unwrap();
        assert_eq!(first.len(), 2);
        assert_eq!(first[0].id, ids[1], "the oldest kept: four of five");
        let next = store.stream_after("s", &first[1].id, 10).await.unwrap();
        let next: Vec<&str> = next.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(next, [ids[3].as_str(), ids[4].as_str()]);
        assert_eq!(
            store
                .stream_at("s", &ids[3])
                .await
                .unwrap()
                .unwrap()
                .field("n"),
            Some(&[3u8][..])
        );
        assert_eq!(
            store.stream_at("s", &ids[0]).await.unwrap(),
            None,
            "no longer kept"
        );
        for bad in [
            "x",
            "1-",
            "-1",
            "1-2-3",
            "(1-2",
            "99999999999999999999999-1",
        ] {
            assert!(store.stream_after("s", bad, 1).await.is_err(), "{bad}");
            assert!(!is_position(bad), "{bad}");
        }
    }
}
