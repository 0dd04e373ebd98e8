//! `Idempotency-Key` (issue 29 item 4) through the gateway on both stores:
//! 32 requests at once with one key make one cart; a repeat is replayed
//! with `Idempotent-Replayed`, quoted or bare; another body is 422; keys
//! are the caller's own; a line added twice with one key is added once.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Reply, TestMesh};
use crate::journey::{Shopper, buyable};

async fn with_key(
    shopper: &Shopper<'_>,
    path: &str,
    key: &str,
    body: Option<serde_json::Value>,
) -> Reply {
    let t = shopper.t;
    let request = match body {
        Some(body) => t.json(Method::POST, path, Some(&shopper.token), &body),
        None => t.authed(Method::POST, path, &shopper.token),
    };
    t.send(request.header("Idempotency-Key", key)).await
}

async fn one_key_one_execution(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let racing = (0..32).map(|_| with_key(&shopper, "/carts", "\"cart-1\"", None));
    let replies = futures::future::join_all(racing).await;
    let mut ids = Vec::new();
    let mut first = 0;
    for reply in &replies {
        match reply.status.as_u16() {
            201 => {
                ids.push(reply.body["id"].clone());
                if reply.header("idempotent-replayed").is_none() {
                    first += 1;
                }
            }
            409 => {
                reply.error(409, "IDEMPOTENCY_KEY_IN_USE");
                assert!(reply.header("retry-after").is_some());
            }
            _ => panic!("201 or 409, not {}: {}", reply.status, reply.body),
        }
    }
    assert_eq!(first, 1, "one execution");
    assert!(ids.iter().all(|id| *id == ids[0]), "one cart: {ids:?}");
    let cart = ids[0].as_str().unwrap().to_string();

    // The bare form is the same key: replayed, same status and body.
    let again = with_key(&shopper, "/carts", "cart-1", None).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body["id"], cart.as_str());
    let other_body = with_key(
        &shopper,
        "/carts",
        "cart-1",
        Some(json!({"currencyCode": "NZD"})),
    )
    .await;
    other_body.error(422, "IDEMPOTENCY_KEY_REUSED");
    let too_long = with_key(&shopper, "/carts", &"k".repeat(256), None).await;
    too_long.error(400, "INVALID_HEADER");
    assert_eq!(too_long.field_error().0, "Idempotency-Key");

    // Another caller's key is their own; without a key, nothing changes.
    let other = Shopper::new(&t).await;
    let theirs = with_key(&other, "/carts", "cart-1", None).await;
    assert_eq!(theirs.status, 201);
    assert_ne!(theirs.body["id"], cart.as_str());
    assert!(theirs.header("idempotent-replayed").is_none());
    let (a, b) = (other.cart().await, other.cart().await);
    assert_ne!(a, b, "no key, two carts");

    // A line added twice with one key is added once.
    let product = buyable(&t, 2).await[0].0.clone();
    let line = json!({"productId": product, "variantId": 1, "quantity": 1});
    let path = format!("/carts/{cart}/line-items");
    for _ in 0..2 {
        let added = with_key(&shopper, &path, "add-1", Some(line.clone())).await;
        assert_eq!(added.status, 200, "{}", added.body);
        assert_eq!(added.body["lineItems"][0]["quantity"], 1);
    }
    let read = t
        .send(t.authed(Method::GET, &format!("/carts/{cart}"), &shopper.token))
        .await;
    assert_eq!(read.body["lineItems"][0]["quantity"], 1, "added once");
}
crate::both_backends!(one_key_one_execution_live, one_key_one_execution);

/// Issue 44 item 2: what one caller and one network keep is bounded (a
/// new key past it is 429 with `Retry-After`, kept keys still replay); a
/// replay honours logout and is `private, no-store`; two keys are 400.
async fn kept_answers_are_bounded_and_replays_are_answers(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    for i in 0..3 {
        let made = with_key(&shopper, "/carts", &format!("k-{i}"), None).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    let over = with_key(&shopper, "/carts", "k-3", None).await;
    over.error(429, "RATE_LIMIT_EXCEEDED");
    let wait: u64 = over.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&wait), "within the window: {wait}");
    let replay = with_key(&shopper, "/carts", "k-0", None).await;
    assert_eq!(replay.status, 201, "{}", replay.body);
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.header("cache-control"), Some("private, no-store"));

    // The network's allowance (5) covers every caller of it.
    let other = Shopper::new(&t).await;
    for i in 0..2 {
        let made = with_key(&other, "/carts", &format!("o-{i}"), None).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    with_key(&other, "/carts", "o-2", None)
        .await
        .error(429, "RATE_LIMIT_EXCEEDED");

    // Logged out, the kept answer is not handed back.
    let out = t
        .send(t.authed(Method::POST, "/auth/logout", &shopper.token))
        .await;
    assert_eq!(out.status, 204, "{}", out.body);
    let after = with_key(&shopper, "/carts", "k-0", None).await;
    assert_eq!(after.status, 401, "{}", after.body);

    let twice = t
        .send(
            t.authed(Method::POST, "/carts", &other.token)
                .header("Idempotency-Key", "a")
                .header("Idempotency-Key", "b"),
        )
        .await;
    twice.error(400, "INVALID_HEADER");
}

mod kept_answers_are_bounded {
    use super::*;
    use crate::helpers::{Backend, spawn_mesh_on};

    const LIMITS: [(&str, &str); 2] = [
        ("IDEMPOTENCY_MAX_KEYS", "3"),
        ("IDEMPOTENCY_MAX_KEYS_NETWORK", "5"),
    ];

    #[tokio::test]
    async fn memory() {
        let t = spawn_mesh_on(Backend::Memory, &LIMITS).await;
        kept_answers_are_bounded_and_replays_are_answers(t).await;
    }

    #[tokio::test]
    async fn redis() {
        let t = spawn_mesh_on(Backend::Redis, &LIMITS).await;
        kept_answers_are_bounded_and_replays_are_answers(t).await;
    }
}
