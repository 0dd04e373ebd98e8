//! One suite, both backends: the Redis run talks to a real redis-server.

use std::sync::Arc;
use std::time::Duration;

use super::Store;
use crate::testing::{RedisCluster, RedisServer};

/// What keeps a backend's server running while its store is tested.
pub(super) type Server = Box<dyn std::any::Any + Send>;

/// Memory, one redis-server, and a Redis Cluster of six nodes.
pub(super) async fn backends() -> Vec<(Store, Option<Server>)> {
    let redis = RedisServer::start().expect("redis-server on PATH");
    let store = Store::redis(&redis.url, "test:").await.expect("connect");
    let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
    let clustered = Store::redis(&cluster.url, "test:")
        .await
        .expect("connect to the cluster");
    vec![
        (Store::memory(), None),
        (store, Some(Box::new(redis))),
        (clustered, Some(Box::new(cluster))),
    ]
}

#[tokio::test]
async fn values_are_created_once_and_replaced_by_version() {
    for (store, _server) in backends().await {
        let b = store.backend();
        assert!(store.insert("a", b"one", None).await.unwrap(), "{b}");
        assert!(!store.insert("a", b"two", None).await.unwrap(), "{b}");
        let got = store.get("a").await.unwrap().unwrap();
        assert_eq!((got.version, got.value.as_slice()), (1, &b"one"[..]), "{b}");
        assert_eq!(
            store.replace("a", 1, b"three", None).await.unwrap(),
            Some(2),
            "{b}"
        );
        assert_eq!(
            store.replace("a", 1, b"stale", None).await.unwrap(),
            None,
            "{b}"
        );
        assert_eq!(
            store.replace("missing", 1, b"x", None).await.unwrap(),
            None,
            "{b}"
        );
        assert_eq!(
            store.get("a").await.unwrap().unwrap().value,
            b"three",
            "{b}"
        );
        assert!(store.exists_any(&["nope", "a"]).await.unwrap(), "{b}");
        assert!(store.delete("a").await.unwrap(), "{b}");
        assert!(store.get("a").await.unwrap().is_none(), "{b}");
        assert!(!store.exists_any(&["a"]).await.unwrap(), "{b}");
    }
}

#[tokio::test]
async fn a_unique_index_admits_one_owner() {
    for (store, _server) in backends().await {
        assert!(
            store
                .insert_indexed("c:1", b"{}", "email:x", b"1")
                .await
                .unwrap()
        );
        assert!(
            !store
                .insert_indexed("c:2", b"{}", "email:x", b"2")
                .await
                .unwrap()
        );
        assert!(
            store.get("c:2").await.unwrap().is_none(),
            "nothing half-written"
        );
        assert_eq!(store.get("email:x").await.unwrap().unwrap().value, b"1");
    }
}

#[tokio::test]
async fn values_expire_after_their_ttl() {
    for (store, _server) in backends().await {
        store
            .insert("t", b"x", Some(Duration::from_millis(150)))
            .await
            .unwrap();
        assert!(store.get("t").await.unwrap().is_some());
        // A replace without a TTL keeps the one the value has.
        assert_eq!(store.replace("t", 1, b"x2", None).await.unwrap(), Some(2));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(
            store.get("t").await.unwrap().is_none(),
            "{}",
            store.backend()
        );
        assert!(
            store.insert("t", b"y", None).await.unwrap(),
            "expired keys can be created again"
        );
    }
}

#[tokio::test]
async fn concurrent_writers_at_one_version_have_exactly_one_winner() {
    for (store, _server) in backends().await {
        store.insert("n", b"0", None).await.unwrap();
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .replace("n", 1, format!("{i}").as_bytes(), None)
                        .await
                        .unwrap()
                })
            })
            .collect();
        let wins = futures::future::join_all(tasks)
            .await
            .into_iter()
            .filter(|r| r.as_ref().unwrap().is_some())
            .count();
        assert_eq!(wins, 1, "{}", store.backend());
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .insert_indexed(&format!("u:{i}"), b"{}", "idx", b"x")
                        .await
                        .unwrap()
                })
            })
            .collect();
        let wins = futures::future::join_all(tasks)
            .await
            .into_iter()
            .filter(|r| *r.as_ref().unwrap())
            .count();
        assert_eq!(wins, 1, "{}", store.backend());
    }
}

/// Concurrent read-modify-writes of one key all land, none lost, even
/// with few attempts each: in one process they take turns.
#[tokio::test]
async fn concurrent_updates_of_one_key_all_land() {
    for (store, _server) in backends().await {
        store.insert_json("counter", &0u64, None).await.unwrap();
        let store = Arc::new(store);
        let tasks: Vec<_> = (0..64)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .update_json("counter", 2, None, |n: &mut u64| {
                            *n += 1;
                            Ok::<_, super::StoreError>(())
                        })
                        .await
                        .unwrap()
                })
            })
            .collect();
        let landed = futures::future::join_all(tasks)
            .await
            .into_iter()
            .filter(|r| matches!(r, Ok(super::Updated::Done { .. })))
            .count();
        let b = store.backend();
        assert_eq!(landed, 64, "{b}");
        let got = store.get_json::<u64>("counter").await.unwrap().unwrap();
        assert_eq!((got.value, got.version), (64, 65), "{b}");
    }
}

/// Writes decided from a value read in the writer's turn (`read_held`),
/// by two replicas of one key at once: each process's writers queue and
/// start from the one before's write, the other replica's writes fail
/// that compare-and-set and are read again; none is lost.
#[tokio::test]
async fn held_writes_from_two_replicas_all_land() {
    use prost_types::Timestamp;
    let redis = RedisServer::start().expect("redis-server on PATH");
    let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
    for url in [&redis.url, &cluster.url] {
        let replicas = [
            Arc::new(Store::redis(url, "held:").await.unwrap()),
            Arc::new(Store::redis(url, "held:").await.unwrap()),
        ];
        let zero = Timestamp::default();
        replicas[0].insert_message("n", &zero, None).await.unwrap();
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let store = replicas[i % 2].clone();
                tokio::spawn(async move {
                    let held = store.read_held::<Timestamp>("n").await.unwrap();
                    let add = |t: &mut Timestamp| {
                        t.seconds += 1;
                        Ok::<_, super::StoreError>(())
                    };
                    store.update_message_from("n", held, 128, None, add).await
                })
            })
            .collect();
        for landed in futures::future::join_all(tasks).await {
            let landed = landed.unwrap().unwrap();
            assert!(matches!(landed, super::Updated::Done { .. }), "{url}");
        }
        let got = replicas[1].get_message::<Timestamp>("n").await.unwrap();
        let got = got.unwrap();
        assert_eq!((got.value.seconds, got.version), (64, 65), "{url}");
    }
}

/// A write seeded from a value known from before (`Held::known`) takes
/// the key's turn: it starts from a newer value the turn holds, and leaves
/// its own there, so the key's next writer in this process does not
/// decide from an older one.
#[tokio::test]
async fn a_write_from_a_known_value_leaves_the_turn_current() {
    use prost_types::Timestamp;
    for (store, _server) in backends().await {
        let b = store.backend();
        let zero = Timestamp::default();
        store.insert_message("k", &zero, None).await.unwrap();
        let add = |n: i64| {
            move |t: &mut Timestamp| {
                t.seconds += n;
                Ok::<_, super::StoreError>(())
            }
        };
        store.update_message("k", 4, None, add(1)).await.unwrap();
        let stale = super::Held::known(super::Versioned {
            version: 1,
            value: zero,
        });
        let seeded = store
            .update_message_from("k", Some(stale), 4, None, add(10))
            .await
            .unwrap();
        let super::Updated::Done { value, version, .. } = seeded else {
            panic!("{b}: not written");
        };
        assert_eq!((value.seconds, version), (11, 3), "{b}");
        // Refuses unless it is given the value just written.
        let current = store
            .update_message("k", 4, None, |t: &mut Timestamp| {
                if t.seconds != 11 {
                    return Err(super::StoreError::Corrupt(format!("given {}", t.seconds)));
                }
                t.seconds += 100;
                Ok(())
            })
            .await;
        assert!(
            matches!(current, Ok(super::Updated::Done { .. })),
            "{b}: {current:?}"
        );
    }
}

#[tokio::test]
async fn json_values_round_trip() {
    for (store, _server) in backends().await {
        store
            .insert_json("j", &serde_json::json!({"a": 1}), None)
            .await
            .unwrap();
        let got = store
            .get_json::<serde_json::Value>("j")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(got.value["a"], 1);
        assert_eq!(
            store
                .replace_json("j", 1, &serde_json::json!({"a": 2}), None)
                .await
                .unwrap(),
            Some(2)
        );
        store.insert("bad", b"not json", None).await.unwrap();
        assert!(store.get_json::<serde_json::Value>("bad").await.is_err());
    }
}

/// `rediss://` to a server whose certificate a private CA signs: refused
/// without that CA (the system's roots do not know it), served with it.
#[tokio::test]
async fn tls_is_verified_against_the_configured_ca() {
    let server = RedisServer::start_tls().expect("redis-server with TLS, and openssl");
    let mut target = super::RedisTarget::new(server.url.clone());
    assert!(
        Store::connect(&target, "test:").await.is_err(),
        "an unknown CA is refused"
    );
    let ca = server.tls.as_ref().unwrap().join("ca.crt");
    target.ca_pem = Some(std::fs::read(ca).unwrap());
    let store = Store::connect(&target, "test:")
        .await
        .expect("TLS with the CA");
    assert!(store.insert("a", b"one", None).await.unwrap());
    assert_eq!(store.replace("a", 1, b"two", None).await.unwrap(), Some(2));
    assert_eq!(store.get("a").await.unwrap().unwrap().value, b"two");
    store.ping().await.unwrap();
}

/// A Redis Cluster with TLS everywhere, reached with its CA.
#[tokio::test]
async fn a_tls_cluster_is_reached_with_its_ca() {
    let cluster = RedisCluster::start_tls().expect("a TLS Redis Cluster, and openssl");
    let mut target = super::RedisTarget::new(cluster.url.clone());
    let ca = cluster.tls.as_ref().unwrap().join("ca.crt");
    target.ca_pem = Some(std::fs::read(ca).unwrap());
    let store = Store::connect(&target, "test:")
        .await
        .expect("TLS cluster with the CA");
    assert_eq!(store.backend(), "redis cluster");
    for key in ["a", "b", "c", "d"] {
        assert!(store.insert(key, b"one", None).await.unwrap(), "{key}");
        assert_eq!(store.replace(key, 1, b"two", None).await.unwrap(), Some(2));
    }
    assert!(store.exists_any(&["x", "y", "d"]).await.unwrap());
}

/// A stream's entries reach each consumer group once, in order, until
/// acknowledged; a set holds each member once.
#[tokio::test]
async fn streams_are_read_once_per_group_and_sets_hold_members_once() {
    for (store, _server) in backends().await {
        let b = store.backend();
        for n in 0..3u8 {
            store
                .stream_add("events", &[("n", &[b'0' + n][..]), ("type", b"t")], 1000)
                .await
                .unwrap();
        }
        let first = store
            .stream_read_group("events", "a", "c1", 2)
            .await
            .unwrap();
        let numbers: Vec<&[u8]> = first.iter().filter_map(|e| e.field("n")).collect();
        assert_eq!(numbers, [b"0", b"1"], "{b}");
        let rest = store
            .stream_read_group("events", "a", "c2", 10)
            .await
            .unwrap();
        assert_eq!(rest.len(), 1, "{b}: the third, to the next consumer");
        assert!(
            store
                .stream_read_group("events", "a", "c1", 10)
                .await
                .unwrap()
                .is_empty()
        );
        let other = store
            .stream_read_group("events", "b", "c1", 10)
            .await
            .unwrap();
        assert_eq!(other.len(), 3, "{b}: another group gets every entry");
        let ids: Vec<String> = first.iter().map(|e| e.id.clone()).collect();
        store.stream_ack("events", "a", &ids).await.unwrap();
        // What c2 was given and never acknowledged, claimed by c3 (a
        // reader that stopped: in memory, its process took the stream).
        let idle = std::time::Duration::ZERO;
        let claimed = store
            .stream_claim_idle("events", "a", "c3", idle, 10)
            .await
            .unwrap();
        let expected = if b == "memory" { 0 } else { 1 };
        assert_eq!(claimed.len(), expected, "{b}");
        assert!(claimed.iter().all(|e| e.id == rest[0].id), "{b}");
        // Read by position, as the back office pages through it.
        let all = store.stream_after("events", "", 10).await.unwrap();
        assert_eq!(all.len(), 3, "{b}");
        let after = store.stream_after("events", &all[0].id, 10).await.unwrap();
        assert_eq!(after.len(), 2, "{b}");
        let at = store.stream_at("events", &all[1].id).await.unwrap();
        assert_eq!(
            at.and_then(|e| e.field("n").map(<[u8]>::to_vec)),
            Some(b"1".to_vec()),
            "{b}"
        );

        store.set_add("pending", "x").await.unwrap();
        store.set_add("pending", "x").await.unwrap();
        store.set_add("pending", "y").await.unwrap();
        let mut members = store.set_sample("pending", 10).await.unwrap();
        members.sort();
        assert_eq!(members, ["x", "y"], "{b}");
        store.set_remove("pending", "x").await.unwrap();
        assert_eq!(store.set_sample("pending", 10).await.unwrap(), ["y"], "{b}");
    }
}

/// A sorted set pages by (score, member) from a cursor, and a member's
/// score only ever rises.
#[tokio::test]
async fn sorted_sets_page_from_a_cursor_and_scores_only_rise() {
    for (store, _server) in backends().await {
        let b = store.backend();
        for (member, score) in [("c/1", 10), ("c/2", 20), ("d/3", 20), ("e/4", 30)] {
            store.zset_raise("updated", member, score).await.unwrap();
        }
        store.zset_raise("updated", "c/1", 25).await.unwrap();
        store.zset_raise("updated", "e/4", 5).await.unwrap();
        let all = store.zset_page("updated", (0, ""), 10).await.unwrap();
        let names: Vec<(&str, i64)> = all.iter().map(|(m, s)| (m.as_str(), *s)).collect();
        assert_eq!(
            names,
            [("c/2", 20), ("d/3", 20), ("c/1", 25), ("e/4", 30)],
            "{b}"
        );
        let page = store.zset_page("updated", (20, "c/2"), 2).await.unwrap();
        let names: Vec<&str> = page.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            ["d/3", "c/1"],
            "{b}: after the cursor, ties by member"
        );
        assert!(
            store
                .zset_page("updated", (30, "e/4"), 2)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(store.zset_remove("updated", "d/3").await.unwrap());
        assert!(!store.zset_remove("updated", "never-there").await.unwrap());
        let left = store
            .zset_page("updated", (i64::MIN, ""), 10)
            .await
            .unwrap();
        let names: Vec<&str> = left.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            names,
            ["c/2", "c/1", "e/4"],
            "{b}: a removed member is gone"
        );
    }
}
