//! Streams (append-only logs read by consumer groups, at least once),
//! sets and sorted sets, for the few things that are neither one versioned
//! value nor a cache: an order's events on their way to the back office,
//! the order books whose outbox still holds some, and orders by when they
//! last changed. Redis Streams, sets and sorted sets on Redis; an
//! in-process equivalent in memory.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use redis::Value;

use super::{Store, StoreError};
use crate::telemetry::metrics::time_store;

/// One entry of a stream: its id (`<ms>-<seq>`) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEntry {
    pub id: String,
    pub fields: Vec<(String, Vec<u8>)>,
}

impl StreamEntry {
    pub fn field(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

impl Store {
    /// Appends an entry to `stream`, which keeps about the last `max_len`.
    pub async fn stream_add(
        &self,
        stream: &str,
        fields: &[(&str, &[u8])],
        max_len: usize,
    ) -> Result<String, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.events().add(stream, fields, max_len)),
            Store::Redis(r) => {
                let key = r.key(stream);
                let mut cmd = redis::cmd("XADD");
                cmd.arg(&key).arg("MAXLEN").arg("~").arg(max_len).arg("*");
                for (name, value) in fields {
                    cmd.arg(*name).arg(*value);
                }
                time_store("stream_add", r.command(&cmd, &key, true)).await
            }
        }
    }

    /// Up to `count` entries `group` has not been given yet (the group
    /// starts at the stream's beginning when new), now pending for
    /// `consumer` until acknowledged.
    pub async fn stream_read_group(
        &self,
        stream: &str,
        group: &str,
        consumer: &str,
        count: usize,
    ) -> Result<Vec<StreamEntry>, StoreError> {
        match self {
            Store::Memory(m) => Ok(m.events().read_group(stream, group, count)),
            Store::Redis(r) => {
                let key = r.key(stream);
                let mut create = redis::cmd("XGROUP");
                create
                    .arg("CREATE")
                    .arg(&key)
                    .arg(group)
                    .arg("0")
                    .arg("MKSTREAM");
                if let Err(e) = r.command::<Value>(&create, &key, false).await
                    && !e.to_string().contains("BUSYGROUP")
                {
                    return Err(e);
                }
                let mut read = redis::cmd("XREADGROUP");
                read.arg("GROUP")
                    .arg(group)
                    .arg(consumer)
                    .arg("COUNT")
                    .arg(count);
                read.arg("STREAMS").arg(&key).arg(">");
                let reply: Value = time_store("stream_read", r.command(&read, &key, false)).await?;
                Ok(entries(reply))
            }
        }
    }

    /// Acknowledges `ids` for `group`: they are not given again.
    pub async fn stream_ack(
        &self,
        stream: &str,
        group: &str,
        ids: &[String],
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        match self {
            Store::Memory(m) => {
                m.events().ack(stream, group, ids);
                Ok(())
            }
            Store::Redis(r) => {
                let key = r.key(stream);
                let mut cmd = redis::cmd("XACK");
                cmd.arg(&key).arg(group).arg(ids);
                r.command::<i64>(&cmd, &key, false).await.map(drop)
            }
        }
    }

    pub async fn set_add(&self, key: &str, member: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => {
                m.events()
                    .sets
                    .entry(key.to_string())
                    .or_default()
                    .insert(member.to_string());
                Ok(())
            }
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("SADD");
                cmd.arg(&key).arg(member);
                r.command::<i64>(&cmd, &key, true).await.map(drop)
            }
        }
    }

    pub async fn set_remove(&self, key: &str, member: &str) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => {
                if let Some(set) = m.events().sets.get_mut(key) {
                    set.remove(member);
                }
                Ok(())
            }
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("SREM");
                cmd.arg(&key).arg(member);
                r.command::<i64>(&cmd, &key, false).await.map(drop)
            }
        }
    }

    /// Up to `count` members of the set `key`, any of them.
    pub async fn set_sample(&self, key: &str, count: usize) -> Result<Vec<String>, StoreError> {
        match self {
            Store::Memory(m) => Ok(m
                .events()
                .sets
                .get(key)
                .map(|set| set.iter().take(count).cloned().collect())
                .unwrap_or_default()),
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("SRANDMEMBER");
                cmd.arg(&key).arg(count);
                r.command(&cmd, &key, false).await
            }
        }
    }
}

/// Ties a page of a sorted set may have to step over at its cursor's score.
const TIES: usize = 64;

impl Store {
    /// Puts `member` in the sorted set `key` at `score`, or raises it
    /// there (never lowers it: an older change arriving late is no news).
    pub async fn zset_raise(&self, key: &str, member: &str, score: i64) -> Result<(), StoreError> {
        match self {
            Store::Memory(m) => {
                m.events()
                    .zsets
                    .entry(key.to_string())
                    .or_default()
                    .raise(member, score);
                Ok(())
            }
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("ZADD");
                cmd.arg(&key).arg("GT").arg(score).arg(member);
                r.command::<i64>(&cmd, &key, true).await.map(drop)
            }
        }
    }

    /// Takes `member` out of the sorted set `key`: whether it was there
    /// (of replicas taking one member at once, exactly one hears true).
    pub async fn zset_remove(&self, key: &str, member: &str) -> Result<bool, StoreError> {
        match self {
            Store::Memory(m) => Ok(m
                .events()
                .zsets
                .get_mut(key)
                .is_some_and(|z| z.remove(member))),
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("ZREM");
                cmd.arg(&key).arg(member);
                r.command::<i64>(&cmd, &key, true).await.map(|n| n > 0)
            }
        }
    }

    /// Up to `limit` members of `key` after `(score, member)` in the set's
    /// order (score, then member), with their scores.
    pub async fn zset_page(
        &self,
        key: &str,
        after: (i64, &str),
        limit: usize,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        let page = match self {
            Store::Memory(m) => m
                .events()
                .zsets
                .get(key)
                .map(|z| z.after(after, limit))
                .unwrap_or_default(),
            Store::Redis(r) => {
                let key = r.key(key);
                let mut cmd = redis::cmd("ZRANGE");
                cmd.arg(&key).arg(after.0).arg("+inf").arg("BYSCORE");
                cmd.arg("LIMIT").arg(0).arg(limit + TIES).arg("WITHSCORES");
                let flat: Vec<(String, f64)> = r.command(&cmd, &key, false).await?;
                flat.into_iter()
                    .map(|(member, score)| (member, score as i64))
                    .filter(|(member, score)| (*score, member.as_str()) > after)
                    .take(limit)
                    .collect()
            }
        };
        Ok(page)
    }
}

/// A sorted set in memory: by (score, member), and each member's score.
#[derive(Default)]
struct MemoryZset {
    order: BTreeSet<(i64, String)>,
    scores: HashMap<String, i64>,
}

impl MemoryZset {
    fn raise(&mut self, member: &str, score: i64) {
        match self.scores.get(member) {
            Some(&old) if old >= score => {}
            old => {
                if let Some(&old) = old {
                    self.order.remove(&(old, member.to_string()));
                }
                self.order.insert((score, member.to_string()));
                self.scores.insert(member.to_string(), score);
            }
        }
    }

    fn remove(&mut self, member: &str) -> bool {
        let Some(score) = self.scores.remove(member) else {
            return false;
        };
        self.order.remove(&(score, member.to_string()))
    }

    fn after(&self, (score, member): (i64, &str), limit: usize) -> Vec<(String, i64)> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.order
            .range((Excluded((score, member.to_string())), Unbounded))
            .take(limit)
            .map(|(score, member)| (member.clone(), *score))
            .collect()
    }
}

/// XREADGROUP's answer: `[[stream, [[id, [field, value, ...]], ...]]]`
/// (nil when nothing is new).
fn entries(reply: Value) -> Vec<StreamEntry> {
    array(reply)
        .into_iter()
        .filter_map(|stream| array(stream).into_iter().nth(1))
        .flat_map(entry_list)
        .collect()
}

fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

/// XRANGE's answer, and each stream's part of XREADGROUP's:
/// `[[id, [field, value, ...]], ...]`.
pub(super) fn entry_list(items: Value) -> Vec<StreamEntry> {
    let text = |v: &Value| match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.clone().into_bytes()),
        _ => None,
    };
    let mut out = Vec::new();
    for entry in array(items) {
        let mut parts = array(entry).into_iter();
        let (Some(id), Some(fields)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Some(id) = text(&id).and_then(|id| String::from_utf8(id).ok()) else {
            continue;
        };
        let flat = array(fields);
        let fields = flat
            .chunks(2)
            .filter_map(|pair| {
                let name = String::from_utf8(text(pair.first()?)?).ok()?;
                Some((name, text(pair.get(1)?)?))
            })
            .collect();
        out.push(StreamEntry { id, fields });
    }
    out
}

/// The in-process streams and sets of the memory store.
#[derive(Default)]
pub struct MemoryEvents {
    pub(super) streams: HashMap<String, MemoryStream>,
    pub(super) sets: HashMap<String, HashSet<String>>,
    zsets: HashMap<String, MemoryZset>,
    sequence: u64,
}

#[derive(Default)]
pub(super) struct MemoryStream {
    /// By sequence, which the id ends with (`<ms>-<sequence>`).
    pub(super) entries: VecDeque<(u64, StreamEntry)>,
    /// Per group: the last sequence given, and what is unacknowledged.
    groups: HashMap<String, (u64, BTreeSet<String>)>,
}

impl MemoryEvents {
    pub(super) fn add(&mut self, stream: &str, fields: &[(&str, &[u8])], max_len: usize) -> String {
        self.sequence += 1;
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let id = format!("{ms}-{}", self.sequence);
        let fields = fields
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_vec()))
            .collect();
        let log = self.streams.entry(stream.to_string()).or_default();
        let entry = StreamEntry {
            id: id.clone(),
            fields,
        };
        log.entries.push_back((self.sequence, entry));
        while log.entries.len() > max_len.max(1) {
            log.entries.pop_front();
        }
        id
    }

    fn read_group(&mut self, stream: &str, group: &str, count: usize) -> Vec<StreamEntry> {
        let log = self.streams.entry(stream.to_string()).or_default();
        let (last, pending) = log.groups.entry(group.to_string()).or_default();
        let given: Vec<(u64, StreamEntry)> = log
            .entries
            .iter()
            .filter(|(seq, _)| *seq > *last)
            .take(count)
            .cloned()
            .collect();
        for (seq, entry) in &given {
            *last = *seq;
            pending.insert(entry.id.clone());
        }
        given.into_iter().map(|(_, entry)| entry).collect()
    }

    fn ack(&mut self, stream: &str, group: &str, ids: &[String]) {
        let pending = self
            .streams
            .get_mut(stream)
            .and_then(|log| log.groups.get_mut(group));
        if let Some((_, pending)) = pending {
            for id in ids {
                pending.remove(id);
            }
        }
    }
}
