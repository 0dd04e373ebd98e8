//! After the order, on both stores with the test provider: its payment is
//! captured when fulfilment ships it (or at once with
//! `PAYMENT_CAPTURE=on_confirm`), voided when the customer cancels before
//! capture and refunded after; each move is an event on the orders
//! stream; a session that expires paid but unconfirmed has its
//! authorization voided by the sweep.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};

const FULFILMENT: &str = "fulfilment@storefront.iam.gserviceaccount.com";

async fn place_order(shopper: &Shopper<'_>, product: &str) -> (String, Value) {
    let id = shopper.checkout_one(product).await;
    let confirmed = shopper.confirm(&id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order = confirmed.body["orderId"].as_str().unwrap().to_string();
    (order, confirmed.body["totals"]["total"].clone())
}

async fn order(shopper: &Shopper<'_>, id: &str) -> Value {
    let read = shopper
        .send(Method::GET, &format!("/orders/{id}"), None)
        .await;
    assert_eq!(read.status, 200, "{}", read.body);
    read.body
}

/// The order once its payment's status is `status` (moves are made as the
/// order's event is published, which a failure leaves to the sweep).
async fn order_with_payment(shopper: &Shopper<'_>, id: &str, status: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..100 {
        last = order(shopper, id).await;
        if last["payment"]["status"] == status {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the payment never became {status}: {last}");
}

async fn advance(t: &TestMesh, order: &str, status: &str) {
    let token = t.mesh.issuer.mint(FULFILMENT, "gateway-internal").unwrap();
    let url = format!(
        "http://{}/internal/orders/{order}/status",
        t.mesh.internal_addr
    );
    let request = t
        .http
        .put(url)
        .bearer_auth(token)
        .json(&json!({"status": status}));
    let moved = t.send(request).await;
    assert_eq!(moved.status, 200, "{}", moved.body);
}

async fn cancel(shopper: &Shopper<'_>, order: &str) {
    let body = json!({"status": "CANCELLED"});
    let path = format!("/orders/{order}");
    let cancelled = shopper.send(Method::PUT, &path, Some(body)).await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
}

/// The payment events of `order` on the orders stream, in order.
async fn payment_events(t: &TestMesh, order: &str, group: &str) -> Vec<String> {
    let stream = storefront_orders::outbox::STREAM;
    let entries = t
        .mesh
        .store
        .stream_read_group(stream, group, "test", 1000)
        .await
        .unwrap();
    let text = |e: &storefront_platform::store::StreamEntry, f: &str| {
        String::from_utf8(e.field(f).unwrap_or_default().to_vec()).unwrap()
    };
    entries
        .iter()
        .filter(|e| text(e, "orderId") == order && text(e, "type").starts_with("payment."))
        .map(|e| text(e, "type"))
        .collect()
}

async fn captured_on_ship_voided_on_cancel(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let (shipped, total) = place_order(&shopper, &products[0].0).await;
    let authorized = order(&shopper, &shipped).await;
    assert_eq!(authorized["payment"]["status"], "authorized");
    assert_eq!(authorized["payment"]["amountCaptured"]["centAmount"], 0);
    advance(&t, &shipped, "PROCESSING").await;
    assert_eq!(
        order(&shopper, &shipped).await["payment"]["status"],
        "authorized"
    );
    advance(&t, &shipped, "SHIPPED").await;
    let captured = order_with_payment(&shopper, &shipped, "captured").await;
    assert_eq!(captured["payment"]["amountCaptured"], total);
    assert_eq!(captured["status"], "SHIPPED");
    // Delivered: nothing more is taken.
    advance(&t, &shipped, "DELIVERED").await;
    let events = payment_events(&t, &shipped, "shipped").await;
    assert_eq!(events, ["payment.authorized", "payment.captured"]);

    let (cancelled, _) = place_order(&shopper, &products[1].0).await;
    cancel(&shopper, &cancelled).await;
    let voided = order_with_payment(&shopper, &cancelled, "voided").await;
    assert_eq!(voided["payment"]["amountCaptured"]["centAmount"], 0);
    let events = payment_events(&t, &cancelled, "cancelled").await;
    assert_eq!(events, ["payment.authorized", "payment.voided"]);
}
both_backends!(
    a_payment_is_captured_when_its_order_ships_and_voided_when_cancelled_before,
    captured_on_ship_voided_on_cancel
);

#[tokio::test]
async fn captured_at_confirm_a_cancelled_order_is_refunded_in_whole() {
    let t = spawn_mesh_on(Backend::Redis, &[("PAYMENT_CAPTURE", "on_confirm")]).await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let (id, total) = place_order(&shopper, &products[0].0).await;
    let captured = order_with_payment(&shopper, &id, "captured").await;
    assert_eq!(captured["payment"]["amountCaptured"], total);
    cancel(&shopper, &id).await;
    let refunded = order_with_payment(&shopper, &id, "refunded").await;
    assert_eq!(refunded["payment"]["amountRefunded"], total);
    let events = payment_events(&t, &id, "refunds").await;
    assert_eq!(
        events,
        ["payment.authorized", "payment.captured", "payment.refunded"]
    );
}

/// The session's payment once its status is `status`.
async fn session_with_payment(shopper: &Shopper<'_>, id: &str, status: &str) -> Value {
    let mut shown = Value::Null;
    for _ in 0..100 {
        let read = shopper
            .send(Method::GET, &format!("/checkout/{id}"), None)
            .await;
        shown = read.body;
        if shown["payment"]["status"] == status {
            return shown;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the session's payment never became {status}: {shown}");
}

/// Without webhooks (a provider's authorization otherwise makes the order
/// by itself), a session paid and never confirmed expires, and so does one
/// whose shopper left the 3-D Secure page: the sweep voids both.
#[tokio::test]
async fn an_expired_paid_session_has_its_authorization_voided() {
    let vars = [
        ("CHECKOUT_TTL_SECS", "2"),
        ("PAYMENTS_WEBHOOK_URL", "http://127.0.0.1:9/nowhere"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let paid = shopper.checkout_one(&products[0].0).await;
    let authorized = shopper.pay(&paid, "pm_card_visa").await;
    assert_eq!(
        authorized.body["status"], "authorized",
        "{}",
        authorized.body
    );
    let left = shopper.checkout_one(&products[1].0).await;
    let waiting = shopper.pay(&left, "pm_card_threeDSecure2Required").await;
    assert_eq!(
        waiting.body["status"], "requires_action",
        "{}",
        waiting.body
    );
    for id in [&paid, &left] {
        let shown = session_with_payment(&shopper, id, "voided").await;
        assert_eq!(shown["status"], "EXPIRED", "{shown}");
        shopper
            .confirm_only(id)
            .await
            .error(409, "CHECKOUT_EXPIRED");
    }
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 0, "{}", orders.body);
}
