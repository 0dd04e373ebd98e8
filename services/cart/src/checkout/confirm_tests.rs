//! The checkout's machine driven through its runner, on the in-memory store
//! with both peers faked (`fakes`): each path a session takes, and each
//! failure a peer can cause on the way, with what it leaves behind (the
//! session, the hold, the cart, the catalog's stock, the orders).

use std::sync::atomic::Ordering;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CartState, CheckoutSession, CheckoutStatus};
use storefront_proto::catalog::v1::StockAction;

use super::fakes::{Mesh, OrdersMode, mesh};
use crate::holds::session_key;

fn cart_id(cart: &Cart) -> String {
    cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default()
}

/// An open session, paid for with the test card that authorizes.
async fn open(m: &Mesh, cart: &Cart) -> CheckoutSession {
    let opened = m.checkout.open("c-1", &cart_id(cart), "net-1", None).await;
    let session = opened.expect("opened");
    m.pay(&session.id).await;
    session
}

async fn record(m: &Mesh, id: &str) -> CheckoutRecord {
    let found = m.checkout.store.get_message(&session_key(id)).await;
    found.expect("read").expect("kept").value
}

async fn hold(m: &Mesh, id: &str) -> HoldState {
    record(m, id).await.hold()
}

/// Changes a session's record as time or a stopped process would have.
async fn edit(m: &Mesh, id: &str, change: impl Fn(&mut CheckoutRecord)) {
    let updated = m
        .checkout
        .store
        .update_message(&session_key(id), 8, None, |r: &mut CheckoutRecord| {
            change(r);
            Ok::<_, ServiceError>(())
        })
        .await;
    updated.expect("edited");
}

async fn expire(m: &Mesh, id: &str) {
    edit(m, id, |r| {
        let session = r.session.get_or_insert_default();
        session.expires_at = Some(storefront_proto::Timestamp {
            seconds: crate::carts::now().seconds - 1,
            nanos: 0,
        });
    })
    .await;
}

fn confirmed(outcome: Result<Outcome, ServiceError>) -> CheckoutSession {
    match outcome {
        Ok(Outcome::Confirmed(session)) => session,
        other => panic!("confirmed, not {other:?}"),
    }
}

fn refused(outcome: Result<Outcome, ServiceError>) -> (ErrorKind, String) {
    match outcome {
        Err(e) => (e.kind, e.code.into_owned()),
        Ok(other) => panic!("refused, not {other:?}"),
    }
}

async fn cart_now(m: &Mesh, cart: &Cart) -> Cart {
    m.checkout
        .carts
        .get("c-1", &cart_id(cart))
        .await
        .expect("kept")
}

fn available(m: &Mesh) -> u32 {
    *m.catalog.available.lock().expect("stock")
}

async fn listed(m: &Mesh) -> Vec<String> {
    let listed = m.checkout.holds.listed(10).await.expect("listed");
    listed.into_iter().map(|(id, _)| id).collect()
}

#[tokio::test]
async fn opening_holds_and_confirming_sells_once() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    assert_eq!(
        (available(&m), hold(&m, &session.id).await),
        (7, HoldState::Held)
    );
    let first = confirmed(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(first.status, CheckoutStatus::Confirmed as i32);
    for _ in 0..2 {
        let again = confirmed(m.checkout.confirm("c-1", &session.id).await);
        assert_eq!(again.order_id, first.order_id);
    }
    assert_eq!(m.orders.made(), 1);
    assert_eq!(
        m.orders.calls.load(Ordering::SeqCst),
        1,
        "answered again without a call"
    );
    assert_eq!(m.catalog.count(StockAction::Sell), 1);
    assert_eq!(
        (available(&m), hold(&m, &session.id).await),
        (7, HoldState::Sold)
    );
    assert_eq!(cart_now(&m, &cart).await.order_id, first.order_id);
    assert!(listed(&m).await.is_empty(), "settled, off the sweep's list");
    let asked = m.catalog.prices_only.lock().expect("asks").clone();
    assert_eq!(asked, [true, true], "open and confirm ask for prices only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_confirms_make_one_order() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    let confirms: Vec<_> = (0..8)
        .map(|_| {
            let checkout = m.checkout.clone();
            let id = session.id.clone();
            tokio::spawn(async move { checkout.confirm("c-1", &id).await })
        })
        .collect();
    let mut orders = Vec::new();
    for confirm in confirms {
        orders.push(confirmed(confirm.await.expect("ran")).order_id);
    }
    orders.dedup();
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(
        (m.orders.made(), m.catalog.count(StockAction::Sell)),
        (1, 1)
    );
    // Those at once waited for the first one's outcome: one ask of the
    // orders service, not one each.
    assert_eq!(m.orders.calls.load(Ordering::SeqCst), 1);
    assert_eq!(available(&m), 7);
}

#[tokio::test]
async fn the_catalog_down_while_selling_confirms_and_the_sweep_sells() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.catalog.stock_down.store(true, Ordering::SeqCst);
    let done = confirmed(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(
        done.status,
        CheckoutStatus::Confirmed as i32,
        "the order exists"
    );
    assert_eq!(m.catalog.count(StockAction::Sell), 0);
    assert_eq!(
        listed(&m).await,
        std::slice::from_ref(&session.id),
        "left for the sweep"
    );
    m.catalog.stock_down.store(false, Ordering::SeqCst);
    m.checkout
        .settle_due(&session.id, 0)
        .await
        .expect("settled");
    assert_eq!(m.catalog.count(StockAction::Sell), 1);
    assert!(listed(&m).await.is_empty());
    assert_eq!(available(&m), 7);
}

#[tokio::test]
async fn the_orders_service_down_is_503_and_a_retry_makes_one_order() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.orders.set(OrdersMode::Down);
    for _ in 0..2 {
        let outcome = m.checkout.confirm("c-1", &session.id).await;
        let failed = refused(outcome);
        assert_eq!(
            failed,
            (ErrorKind::Unavailable, "ORDERS_UNAVAILABLE".into())
        );
        let shown = m.checkout.get("c-1", &session.id).await.expect("kept");
        assert_eq!(shown.status, CheckoutStatus::Open as i32);
        assert_eq!(hold(&m, &session.id).await, HoldState::Selling);
        assert_eq!(cart_now(&m, &cart).await.state, CartState::Ordered as i32);
    }
    m.orders.set(OrdersMode::Up);
    let done = confirmed(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(
        (m.orders.made(), m.catalog.count(StockAction::Sell)),
        (1, 1)
    );
    assert_eq!(cart_now(&m, &cart).await.order_id, done.order_id);
}

/// The orders service's own refusal is the client's 4xx, not a 503; the
/// cart is given back and the hold kept, so nothing is lost.
#[tokio::test]
async fn an_orders_refusal_is_its_4xx_and_gives_the_cart_back() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.orders.set(OrdersMode::Refusing);
    let failed = refused(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(failed, (ErrorKind::BadRequest, "INVALID_ORDER".into()));
    assert_eq!(cart_now(&m, &cart).await.state, CartState::Active as i32);
    assert_eq!(
        (hold(&m, &session.id).await, available(&m)),
        (HoldState::Held, 7)
    );
    assert_eq!(m.orders.made(), 0);
    // The cart changed (given back): this session cannot buy it, a new one can.
    m.orders.set(OrdersMode::Up);
    let again = refused(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(again, (ErrorKind::Conflict, "CART_CHANGED".into()));
    let newer = open(&m, &cart).await;
    confirmed(m.checkout.confirm("c-1", &newer.id).await);
    assert_eq!((m.orders.made(), available(&m)), (1, 7));
}

#[tokio::test]
async fn a_repriced_cart_is_no_order_and_carries_the_cart() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    *m.catalog.cents.lock().expect("price") = 1_200;
    let repriced = match m.checkout.confirm("c-1", &session.id).await {
        Ok(Outcome::Repriced(repriced)) => repriced,
        other => panic!("repriced, not {other:?}"),
    };
    let total = repriced
        .cart
        .and_then(|c| c.total_price)
        .map(|t| t.cent_amount);
    assert_eq!(total, Some(3_600));
    assert!(
        repriced.message.contains("36.00 AUD"),
        "{}",
        repriced.message
    );
    assert_eq!(
        (
            m.orders.calls.load(Ordering::SeqCst),
            hold(&m, &session.id).await
        ),
        (0, HoldState::Held)
    );
    assert_eq!(cart_now(&m, &cart).await.state, CartState::Active as i32);
}

#[tokio::test]
async fn a_cart_changed_since_open_puts_the_hold_back() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.cart_add(&cart, 1).await;
    let failed = refused(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(failed, (ErrorKind::Conflict, "CART_CHANGED".into()));
    assert_eq!(
        (hold(&m, &session.id).await, available(&m)),
        (HoldState::Held, 7)
    );
}

#[tokio::test]
async fn a_cart_ordered_elsewhere_releases_the_hold() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    let carts = &m.checkout.carts;
    let version = crate::carts::version(&cart_now(&m, &cart).await);
    carts
        .claim("c-1", &cart_id(&cart), version, "another", None)
        .await
        .expect("claimed");
    let failed = refused(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(failed, (ErrorKind::Conflict, "CART_ORDERED".into()));
    assert_eq!(
        (hold(&m, &session.id).await, available(&m)),
        (HoldState::Released, 10)
    );
    assert!(listed(&m).await.is_empty());
}

#[tokio::test]
async fn a_newer_checkout_supersedes_releases_and_later_drops_the_older() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let first = open(&m, &cart).await;
    let second = open(&m, &cart).await;
    let shown = m.checkout.get("c-1", &first.id).await.expect("kept");
    assert_eq!(shown.status, CheckoutStatus::Expired as i32);
    assert_eq!(
        (hold(&m, &first.id).await, available(&m)),
        (HoldState::Released, 7)
    );
    let failed = refused(m.checkout.confirm("c-1", &first.id).await);
    assert_eq!(failed, (ErrorKind::Conflict, "CHECKOUT_SUPERSEDED".into()));
    let third = open(&m, &cart).await;
    let gone = m.checkout.get("c-1", &first.id).await.expect_err("dropped");
    assert_eq!(gone.kind, ErrorKind::NotFound);
    assert_eq!(hold(&m, &second.id).await, HoldState::Released);
    confirmed(m.checkout.confirm("c-1", &third.id).await);
    assert_eq!((m.orders.made(), available(&m)), (1, 7));
}

#[tokio::test]
async fn an_expired_session_is_refused_without_a_call_and_swept() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    expire(&m, &session.id).await;
    let failed = refused(m.checkout.confirm("c-1", &session.id).await);
    assert_eq!(failed, (ErrorKind::Conflict, "CHECKOUT_EXPIRED".into()));
    assert_eq!(m.orders.calls.load(Ordering::SeqCst), 0);
    m.checkout.settle_due(&session.id, 0).await.expect("swept");
    assert_eq!(
        (hold(&m, &session.id).await, available(&m)),
        (HoldState::Released, 10)
    );
    let extend = m
        .checkout
        .extend("c-1", &session.id)
        .await
        .expect_err("expired");
    assert_eq!(extend.code, "CHECKOUT_EXPIRED");
}

/// A confirm that claimed its cart and stopped (the orders service down)
/// is past its expiry: left alone within the grace, then finished by the
/// sweep, which makes the one order.
#[tokio::test]
async fn expiry_during_a_confirm_lets_the_sweep_finish_it() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.orders.set(OrdersMode::Down);
    refused(m.checkout.confirm("c-1", &session.id).await);
    expire(&m, &session.id).await;
    m.orders.set(OrdersMode::Up);
    m.checkout
        .settle_due(&session.id, 1_000)
        .await
        .expect("left");
    assert_eq!(
        (m.orders.made(), hold(&m, &session.id).await),
        (0, HoldState::Selling)
    );
    m.checkout
        .settle_due(&session.id, 61_000)
        .await
        .expect("finished");
    let shown = m.checkout.get("c-1", &session.id).await.expect("kept");
    assert_eq!(shown.status, CheckoutStatus::Confirmed as i32);
    assert_eq!((m.orders.made(), available(&m)), (1, 7));
    assert_eq!(m.catalog.count(StockAction::Sell), 1);
}

/// A confirm that moved the hold but stopped before claiming the cart: the
/// sweep gives the stock back past the grace.
#[tokio::test]
async fn a_selling_hold_without_its_cart_is_released_when_due() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    edit(&m, &session.id, |r| r.set_hold(HoldState::Selling)).await;
    expire(&m, &session.id).await;
    m.checkout
        .settle_due(&session.id, 61_000)
        .await
        .expect("swept");
    assert_eq!(
        (hold(&m, &session.id).await, available(&m)),
        (HoldState::Released, 10)
    );
    assert_eq!(m.orders.made(), 0);
}

#[tokio::test]
async fn a_short_catalog_refuses_the_open_and_holds_nothing() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    *m.catalog.available.lock().expect("stock") = 2;
    let opened = m.checkout.open("c-1", &cart_id(&cart), "net-1", None).await;
    assert_eq!(opened.expect_err("short").code, "INSUFFICIENT_STOCK");
    assert_eq!((available(&m), m.catalog.count(StockAction::Hold)), (2, 0));
    assert!(listed(&m).await.is_empty());
}

/// The catalog failing as the hold is placed: the open is refused, and the
/// release (which may find a hold the catalog made before failing) is the
/// sweep's.
#[tokio::test]
async fn the_catalog_down_at_the_hold_refuses_the_open_and_the_sweep_settles() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    m.catalog.stock_down.store(true, Ordering::SeqCst);
    let opened = m.checkout.open("c-1", &cart_id(&cart), "net-1", None).await;
    assert_eq!(opened.expect_err("down").code, "CATALOG_UNAVAILABLE");
    let left = listed(&m).await;
    assert_eq!(left.len(), 1);
    m.catalog.stock_down.store(false, Ordering::SeqCst);
    m.checkout.settle_due(&left[0], 0).await.expect("settled");
    assert!(listed(&m).await.is_empty());
    assert_eq!(available(&m), 10);
}

#[tokio::test]
async fn a_session_is_extended_once_and_not_once_confirmed() {
    let m = mesh(10);
    let cart = m.cart(3).await;
    let session = open(&m, &cart).await;
    m.extend_later(&session.id).await;
    let twice = m
        .checkout
        .extend("c-1", &session.id)
        .await
        .expect_err("once");
    assert_eq!(twice.code, "CHECKOUT_ALREADY_EXTENDED");
    confirmed(m.checkout.confirm("c-1", &session.id).await);
    let after = m
        .checkout
        .extend("c-1", &session.id)
        .await
        .expect_err("confirmed");
    assert_eq!(after.code, "CHECKOUT_CONFIRMED");
    let theirs = m.checkout.confirm("c-2", &session.id).await;
    assert_eq!(refused(theirs).0, ErrorKind::NotFound);
}
