//! Commands sent together, in one round trip, where the order they run in
//! still holds: a pipeline on one connection runs in the order written,
//! but a cluster's pipeline spread over nodes does not, so on a cluster
//! only commands of one key go together.

use super::{Conn, RedisStore, unavailable};
use crate::store::{Published, StoreError, Versioned};

impl RedisStore {
    /// Appends `entries` to `stream` in their order, in one round trip (one
    /// key: one node on a cluster too); acknowledged once a replica holds
    /// them all. The entries' ids, in order.
    pub async fn stream_add_all(
        &self,
        stream: &str,
        entries: &[Vec<(&str, &[u8])>],
        max_len: usize,
    ) -> Result<Vec<String>, StoreError> {
        let key = self.key(stream);
        let mut pipe = redis::pipe();
        for fields in entries {
            let cmd = pipe.cmd("XADD").arg(&key).arg("MAXLEN").arg("~");
            let cmd = cmd.arg(max_len).arg("*");
            for (name, value) in fields {
                cmd.arg(*name).arg(*value);
            }
        }
        let mut conn = self.conn.clone();
        let ids: Vec<String> = pipe.query_async(&mut conn).await.map_err(unavailable)?;
        self.replicated(&key).await?;
        Ok(ids)
    }

    /// Takes `member` out of the set `set`, then reads `key` as it is
    /// after that: one round trip on one server; two in turn on a cluster,
    /// where the set and the value may live on different nodes.
    pub async fn set_remove_then_get(
        &self,
        set: &str,
        member: &str,
        key: &str,
    ) -> Result<Option<Versioned<Vec<u8>>>, StoreError> {
        let (set, key) = (self.key(set), self.key(key));
        let mut conn = self.conn.clone();
        if let Conn::Cluster(_) = self.conn {
            let _: i64 = redis::cmd("SREM")
                .arg(&set)
                .arg(member)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            return self.get_full(&key).await;
        }
        let mut pipe = redis::pipe();
        pipe.cmd("SREM").arg(&set).arg(member).ignore();
        pipe.cmd("HMGET").arg(&key).arg("v").arg("d");
        let (found,): ((Option<u64>, Option<Vec<u8>>),) =
            pipe.query_async(&mut conn).await.map_err(unavailable)?;
        Ok(versioned(found))
    }

    /// `get` of a key already prefixed.
    pub(super) async fn get_full(
        &self,
        key: &str,
    ) -> Result<Option<Versioned<Vec<u8>>>, StoreError> {
        let mut conn = self.conn.clone();
        let found = redis::cmd("HMGET")
            .arg(key)
            .arg("v")
            .arg("d")
            .query_async(&mut conn)
            .await
            .map_err(unavailable)?;
        Ok(versioned(found))
    }
}

/// A value's `HMGET v d` reply: absent when either field is.
pub(super) fn versioned(found: (Option<u64>, Option<Vec<u8>>)) -> Option<Versioned<Vec<u8>>> {
    let (version, value) = found;
    version
        .zip(value)
        .map(|(version, value)| Versioned { version, value })
}

/// KEYS[1] value, KEYS[2] stream, KEYS[3..] sorted sets; ARGV[1] data,
/// ARGV[2] the stream's length kept, ARGV[3] entries; then each entry's
/// field count and its names and values; then each sorted set's score and
/// member (raised, never lowered).
const INSERT_PUBLISHED: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1])
local at = 4
for _ = 1, tonumber(ARGV[3]) do
  local fields = tonumber(ARGV[at])
  local add = {'XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*'}
  for i = 1, 2 * fields do add[#add + 1] = ARGV[at + i] end
  at = at + 1 + 2 * fields
  redis.call(unpack(add))
end
for k = 3, #KEYS do
  redis.call('ZADD', KEYS[k], 'GT', ARGV[at], ARGV[at + 1])
  at = at + 2
end
return 1";

static INSERT_PUBLISHED_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(INSERT_PUBLISHED));

impl RedisStore {
    /// Creates `key` (unless it exists) with `published`'s stream entries
    /// and sorted set members, all or none, in one script: on one server.
    /// None on a cluster, where the keys lie in different slots.
    pub async fn insert_published(
        &self,
        key: &str,
        value: &[u8],
        published: &Published<'_>,
    ) -> Result<Option<bool>, StoreError> {
        if let Conn::Cluster(_) = self.conn {
            return Ok(None);
        }
        let script = &*INSERT_PUBLISHED_SCRIPT;
        let mut call = script.key(self.key(key));
        call.key(self.key(published.stream));
        for (set, _, _) in published.raised {
            call.key(self.key(set));
        }
        call.arg(value).arg(published.max_len);
        call.arg(published.entries.len());
        for fields in published.entries {
            call.arg(fields.len());
            for (name, value) in fields {
                call.arg(*name).arg(*value);
            }
        }
        for (_, member, score) in published.raised {
            call.arg(*score).arg(*member);
        }
        let mut conn = self.conn.clone();
        let created: i64 = call.invoke_async(&mut conn).await.map_err(unavailable)?;
        Ok(Some(created == 1))
    }
}
