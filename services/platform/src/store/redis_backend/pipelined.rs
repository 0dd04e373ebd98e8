//! Commands sent together, in one round trip, where the order they run in
//! still holds: a pipeline on one connection runs in the order written,
//! but a cluster's pipeline spread over nodes does not, so on a cluster
//! only commands of one key go together.

use super::{Conn, RedisStore, unavailable};
use crate::store::{StoreError, Versioned};

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
