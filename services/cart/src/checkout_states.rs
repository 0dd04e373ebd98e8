//! The checkout state machine, transition by transition, on the in-memory
//! store. The catalog and orders peers point at a closed port: a path that
//! must make no call proves it by succeeding, and one that must reach the
//! orders service shows it by the orders' error (never the catalog's).

use std::sync::{Arc, RwLock};
use std::time::Duration;

use storefront_platform::client::Peer;
use storefront_platform::client::call::Caller;
use storefront_platform::identity::token_source::TokenSource;
use storefront_proto::Timestamp;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;

use super::*;
use crate::carts::version;
use crate::config::CartLimits;
use crate::promotions::Catalogue;

/// A peer nothing listens for (the discard port of loopback).
fn unreachable(name: &'static str) -> Caller {
    let tokens = Arc::new(TokenSource::new("http://127.0.0.1:9/token"));
    let peer = Peer::new(
        name,
        "http://127.0.0.1:9",
        name,
        tokens,
        Duration::from_millis(300),
    );
    Caller::new(peer.expect("a peer"))
}

fn machine() -> (Checkout, Carts) {
    let store = Store::memory();
    let carts = Carts {
        store: store.clone(),
        catalog: unreachable("catalog"),
        recent_products: storefront_platform::recent::Recent::new(Duration::ZERO, 1),
        promotions: Arc::new(RwLock::new(Catalogue::new(Vec::new()))),
        limits: CartLimits::default(),
    };
    let checkout = Checkout {
        holds: crate::holds::Holds {
            store: store.clone(),
            catalog: unreachable("catalog"),
            ledgers: crate::hold_limits::Ledgers::new(
                store.clone(),
                Default::default(),
                Duration::from_secs(900),
            ),
        },
        store,
        orders: unreachable("orders"),
        ttl: Duration::from_secs(900),
        guest_ttl: Duration::from_secs(600),
    };
    (checkout, carts)
}

/// A session record as opening one writes it, `ttl_secs` from now.
fn opened(id: &str, cart: &Cart, customer: &str, ttl_secs: i64) -> CheckoutRecord {
    let now = now();
    CheckoutRecord {
        session: Some(CheckoutSession {
            id: id.to_string(),
            cart_id: cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
            status: CheckoutStatus::Open as i32,
            expires_at: Some(Timestamp {
                seconds: now.seconds + ttl_secs,
                nanos: 0,
            }),
            ..Default::default()
        }),
        customer_id: customer.to_string(),
        cart_version: version(cart),
        planned_order_id: format!("order-of-{id}"),
        ..Default::default()
    }
}

async fn put(checkout: &Checkout, record: &CheckoutRecord) {
    let id = record
        .session
        .as_ref()
        .map(|s| s.id.clone())
        .unwrap_or_default();
    let stored = checkout
        .store
        .insert_message(&session_key(&id), record, None)
        .await;
    assert!(stored.expect("stored"), "a new session");
}

fn cart_id(cart: &Cart) -> String {
    cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default()
}

#[tokio::test]
async fn a_confirmed_session_answers_again_without_a_call() {
    let (checkout, carts) = machine();
    let cart = carts.create("c-1", "AUD").await.expect("a cart");
    let mut record = opened("s-1", &cart, "c-1", 600);
    if let Some(session) = record.session.as_mut() {
        session.status = CheckoutStatus::Confirmed as i32;
        session.order_id = "order-of-s-1".into();
    }
    put(&checkout, &record).await;
    for _ in 0..2 {
        match checkout.confirm(&carts, "c-1", "s-1").await {
            Ok(Outcome::Confirmed(session)) => assert_eq!(session.order_id, "order-of-s-1"),
            other => panic!("confirmed again, not {other:?}"),
        }
    }
}

#[tokio::test]
async fn each_refusal_by_state_and_owner() {
    let (checkout, carts) = machine();
    let cart = carts.create("c-1", "AUD").await.expect("a cart");
    put(&checkout, &opened("expired", &cart, "c-1", -1)).await;
    let mut replaced = opened("replaced", &cart, "c-1", 600);
    replaced.superseded_by = "newer".into();
    put(&checkout, &replaced).await;
    put(&checkout, &opened("theirs", &cart, "c-2", 600)).await;
    let refusal = |result: Result<Outcome, ServiceError>| match result {
        Err(e) => (e.kind, e.code.into_owned()),
        Ok(outcome) => panic!("refused, not {outcome:?}"),
    };
    let cases = [
        ("expired", (ErrorKind::Conflict, "CHECKOUT_EXPIRED")),
        ("replaced", (ErrorKind::Conflict, "CHECKOUT_SUPERSEDED")),
        ("theirs", (ErrorKind::NotFound, "NOT_FOUND")),
        ("unknown", (ErrorKind::NotFound, "NOT_FOUND")),
    ];
    for (session, (kind, code)) in cases {
        let (got_kind, got_code) = refusal(checkout.confirm(&carts, "c-1", session).await);
        assert_eq!((got_kind, got_code.as_str()), (kind, code), "{session}");
    }
    // A refused confirm changes nothing: the expired one still shows so.
    let shown = checkout.get("c-1", "expired").await.expect("kept");
    assert_eq!(shown.status, CheckoutStatus::Expired as i32);
}

/// A crash (or a failing orders service) between claiming the cart and
/// creating its order loses nothing: the session stays OPEN, the cart
/// stays claimed for the planned order, and the next confirm goes straight
/// to creating that order (no repricing, no second claim).
#[tokio::test]
async fn a_claim_whose_order_was_not_made_is_retried_not_lost() {
    let (checkout, carts) = machine();
    let cart = carts.create("c-1", "AUD").await.expect("a cart");
    let record = opened("s-1", &cart, "c-1", 600);
    put(&checkout, &record).await;
    let id = cart_id(&cart);
    carts
        .claim("c-1", &id, record.cart_version, &record.planned_order_id)
        .await
        .expect("claimed");
    for _ in 0..2 {
        let failed = checkout.confirm(&carts, "c-1", "s-1").await;
        let error = failed.expect_err("the orders service is down");
        assert_eq!(error.code, "ORDERS_UNAVAILABLE", "{}", error.message);
        let session = checkout.get("c-1", "s-1").await.expect("kept");
        assert_eq!(session.status, CheckoutStatus::Open as i32);
        let cart = carts.get("c-1", &id).await.expect("kept");
        assert_eq!(cart.state, CartState::Ordered as i32);
        assert_eq!(cart.order_id, record.planned_order_id);
    }
}
