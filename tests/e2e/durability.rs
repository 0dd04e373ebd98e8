//! What survives the loss of Redis: a primary of a cluster killed under
//! writes (failover), and a server with its append-only file restarted
//! under a running mesh. Money (confirmed orders), accounts and sessions
//! must all be there afterwards.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};

/// Three shoppers, each with a confirmed order: their tokens and orders.
async fn confirmed_orders(t: &TestMesh) -> Vec<(String, String)> {
    let products = buyable(t, 3).await;
    let mut made = Vec::new();
    for _ in 0..3 {
        let shopper = Shopper::new(t).await;
        let id = shopper.checkout_one(&products[0].0).await;
        let confirmed = shopper.confirm(&id).await;
        assert_eq!(confirmed.status, 200, "{}", confirmed.body);
        let order = confirmed.body["orderId"].as_str().unwrap().to_string();
        made.push((shopper.token.clone(), order));
    }
    made
}

/// Every customer's session still admits them and their order is there.
async fn all_there(t: &TestMesh, made: &[(String, String)]) {
    for (token, order) in made {
        let me = t.send(t.authed(Method::GET, "/customers/me", token)).await;
        assert_eq!(
            me.status, 200,
            "the customer and session survive: {}",
            me.body
        );
        let got = t
            .send(t.authed(Method::GET, &format!("/orders/{order}"), token))
            .await;
        assert_eq!(got.status, 200, "the order survives: {}", got.body);
        assert_eq!(got.body["status"], "CONFIRMED");
    }
}

/// A primary killed under a stream of writes: the cluster fails over to
/// its replica, writes go on, and every customer, session and confirmed
/// order made before is still there.
#[tokio::test]
async fn a_failed_over_primary_loses_no_customer_session_or_order() {
    let mut t = spawn_mesh_on(Backend::Cluster, &[]).await;
    let before = confirmed_orders(&t).await;
    let cluster = t._cluster.as_mut().unwrap();
    let killed = cluster.kill_primary().expect("a primary to kill");
    // Writes (a customer's preferences, each time changed) until ten in a
    // row succeed: some fail while the cluster notices, none after it has
    // failed over.
    let (mut streak, mut failed, mut writes) = (0, 0, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let path = "/customers/me/preferences";
    while streak < 10 {
        assert!(
            std::time::Instant::now() < deadline,
            "writes did not resume after primary {killed} died ({failed} failed)"
        );
        writes += 1;
        let wanted = json!({"preferredLocale": "en-NZ", "preferredCurrency": "NZD", "marketingEmails": writes % 2 == 0});
        let reply = t
            .send(t.json(Method::PUT, path, Some(&before[0].0), &wanted))
            .await;
        if reply.status == 200 {
            assert_eq!(reply.body, wanted);
            streak += 1;
        } else {
            assert!(
                reply.status.is_server_error(),
                "only unavailability: {}",
                reply.body
            );
            (streak, failed) = (0, failed + 1);
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    // The writes above may live on another primary's slots: every record
    // made before is checked once the killed primary's slots have moved.
    let cluster = t._cluster.as_ref().unwrap();
    cluster
        .wait_failed_over(killed)
        .expect("the cluster fails over");
    all_there(&t, &before).await;
}

/// A redis-server with its append-only file (fsync every second, no
/// eviction: what the chart asks of Redis) restarted under a running mesh:
/// readiness names Redis while it is away, and afterwards every customer,
/// session and confirmed order is there and the shop takes orders again.
#[tokio::test]
async fn a_restarted_redis_keeps_every_customer_session_and_order() {
    let mut t = spawn_mesh_on(Backend::PersistentRedis, &[]).await;
    let before = confirmed_orders(&t).await;
    t._redis.as_mut().unwrap().stop().expect("redis stops");
    let ready = t.fetch("/health/ready").await;
    ready.error(503, "NOT_READY");
    assert_eq!(ready.body["checks"], serde_json::Value::Null);
    let named: Vec<&str> = ready.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["field"].as_str())
        .collect();
    assert_eq!(named, ["redis"], "{}", ready.body);
    t._redis
        .as_mut()
        .unwrap()
        .start_again()
        .expect("redis starts again");
    t.wait_ready().await;
    all_there(&t, &before).await;
    let after = confirmed_orders(&t).await;
    all_there(&t, &after).await;
}

/// Issue 44, availability: after a failover the promoted primary has no
/// replica, and writes to it used to wait a second each for one (logins
/// 503, confirms 503/504, for as long as the shard stayed so). Now that
/// shard's writes are not waited for: logins and eight concurrent confirms
/// of one checkout answer 200 (one order), readiness says `degraded`.
#[tokio::test]
async fn a_shard_left_without_a_replica_does_not_stall_writes() {
    let mut t = spawn_mesh_on(Backend::Cluster, &[]).await;
    let products = buyable(&t, 3).await;
    let timed = async |t: &TestMesh| {
        let started = std::time::Instant::now();
        let shopper = Shopper::new(t).await;
        let session = shopper.checkout_one(&products[0].0).await;
        let confirms = (0..8).map(|_| shopper.confirm(&session));
        let replies = futures::future::join_all(confirms).await;
        for reply in &replies {
            assert_eq!(reply.status, 200, "{}", reply.body);
            assert_eq!(
                reply.body["orderId"], replies[0].body["orderId"],
                "one order"
            );
        }
        started.elapsed()
    };
    let before: Vec<_> = futures::future::join_all((0..3).map(|_| timed(&t))).await;
    let cluster = t._cluster.as_mut().unwrap();
    let killed = cluster.kill_primary().expect("a primary to kill");
    t._cluster
        .as_ref()
        .unwrap()
        .wait_failed_over(killed)
        .expect("the cluster fails over");
    // The clients notice the new primary within a few refused writes.
    for _ in 0..100 {
        let reply = t
            .send(t.json(Method::POST, "/auth/guest", None, &json!({})))
            .await;
        if reply.status == 201 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let mut after = Vec::new();
    for _ in 0..3 {
        after.push(timed(&t).await);
    }
    // Writes through the gateway's own store meet the shard too: its
    // readiness then says so, still ready.
    let shopper = Shopper::new(&t).await;
    for i in 0..12 {
        let request = t
            .authed(Method::POST, "/carts", &shopper.token)
            .header("Idempotency-Key", format!("degraded-{i}"));
        assert_eq!(t.send(request).await.status, 201);
    }
    let ready = t.fetch("/health/ready").await;
    assert_eq!(ready.status, 200, "{}", ready.body);
    assert_eq!(ready.body["checks"]["redis"], "degraded", "{}", ready.body);
    println!("a shopper's sign-up, checkout and 8 confirms: before {before:?}, after {after:?}");
}
