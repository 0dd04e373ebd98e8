//! State per customer is bounded (caps configurable, small here): each cap
//! reached answers 409 `LIMIT_REACHED`, except sessions, where a login
//! beyond the cap ends the oldest session; carts expire when idle.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};

const CAPS: [(&str, &str); 4] = [
    ("MAX_ADDRESSES", "2"),
    ("MAX_ACTIVE_CARTS", "2"),
    ("MAX_CART_LINES", "2"),
    ("MAX_SESSIONS", "2"),
];

async fn caps(backend: Backend) -> TestMesh {
    spawn_mesh_on(backend, &CAPS).await
}

async fn addresses_carts_and_lines_are_capped(backend: Backend) {
    let t = caps(backend).await;
    let shopper = Shopper::new(&t).await;
    let address = json!({"firstName": "Ada", "lastName": "L", "streetName": "George St", "city": "Sydney", "postalCode": "2000", "country": "AU"});
    let mut ids = Vec::new();
    for _ in 0..2 {
        let created = shopper
            .send(
                Method::POST,
                "/customers/me/addresses",
                Some(address.clone()),
            )
            .await;
        assert_eq!(created.status, 201, "{}", created.body);
        ids.push(created.body["id"].as_str().unwrap().to_string());
    }
    shopper
        .send(
            Method::POST,
            "/customers/me/addresses",
            Some(address.clone()),
        )
        .await
        .error(409, "LIMIT_REACHED");
    let path = format!("/customers/me/addresses/{}", ids[0]);
    assert_eq!(shopper.send(Method::DELETE, &path, None).await.status, 204);
    let again = shopper
        .send(Method::POST, "/customers/me/addresses", Some(address))
        .await;
    assert_eq!(again.status, 201, "room again after a delete");

    let carts = [shopper.cart().await, shopper.cart().await];
    shopper
        .send(Method::POST, "/carts", None)
        .await
        .error(409, "LIMIT_REACHED");
    let path = format!("/carts/{}", carts[0]);
    assert_eq!(shopper.send(Method::DELETE, &path, None).await.status, 204);
    assert_eq!(shopper.send(Method::POST, "/carts", None).await.status, 201);

    let products = buyable(&t, 3).await;
    let cart = &carts[1];
    for p in &products[..2] {
        assert_eq!(shopper.add(cart, &p.0, 1, 1).await.status, 200);
    }
    shopper
        .add(cart, &products[2].0, 1, 1)
        .await
        .error(409, "LIMIT_REACHED");
    assert_eq!(
        shopper.add(cart, &products[0].0, 1, 1).await.status,
        200,
        "more of a line already there is not a new line"
    );
}

#[tokio::test]
async fn addresses_carts_and_lines_are_capped_in_memory() {
    addresses_carts_and_lines_are_capped(Backend::Memory).await;
}

#[tokio::test]
async fn addresses_carts_and_lines_are_capped_on_redis() {
    addresses_carts_and_lines_are_capped(Backend::Redis).await;
}

async fn a_login_beyond_the_cap_ends_the_oldest_session(backend: Backend) {
    let t = caps(backend).await;
    let email = format!("many-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let mut tokens = Vec::new();
    for _ in 0..3 {
        let login = t.log_in(&email, "correct horse 42").await;
        assert_eq!(login.status, 200, "{}", login.body);
        tokens.push(login.body["accessToken"].as_str().unwrap().to_string());
    }
    let me = |token: &str| t.send(t.authed(Method::GET, "/customers/me", token));
    assert_eq!(me(&tokens[0]).await.status, 401, "the oldest session ended");
    assert_eq!(me(&tokens[1]).await.status, 200);
    assert_eq!(me(&tokens[2]).await.status, 200);
}

#[tokio::test]
async fn a_login_beyond_the_cap_ends_the_oldest_session_in_memory() {
    a_login_beyond_the_cap_ends_the_oldest_session(Backend::Memory).await;
}

#[tokio::test]
async fn a_login_beyond_the_cap_ends_the_oldest_session_on_redis() {
    a_login_beyond_the_cap_ends_the_oldest_session(Backend::Redis).await;
}

#[tokio::test]
async fn carts_expire_when_idle_and_every_write_restarts_the_clock() {
    let t = spawn_mesh_on(Backend::Redis, &[("CART_IDLE_TTL_SECS", "3600")]).await;
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    let socket = &t._redis.as_ref().unwrap().socket;
    let ttl = || {
        let out = std::process::Command::new("redis-cli")
            .arg("-s")
            .arg(socket)
            .args(["PTTL", &format!("sf:cart:{cart}")])
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<i64>()
            .unwrap()
    };
    let first = ttl();
    assert!((3_000_000..=3_600_000).contains(&first), "{first}");
    let products = buyable(&t, 1).await;
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let before = ttl();
    assert!(before <= first - 1_000, "the idle clock runs: {before}");
    assert_eq!(shopper.add(&cart, &products[0].0, 1, 1).await.status, 200);
    let after = ttl();
    assert!(
        after > before + 500,
        "a write restarts the idle clock: {after}"
    );
}
