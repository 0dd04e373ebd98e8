//! Paying at checkout through the gateway, on both stores, with the test
//! provider (Stripe's test methods): no order without an authorized
//! payment, a decline and another method, 3-D Secure completed and the
//! order made by the provider's webhook alone, webhooks verified and
//! applied once however often and in whatever order they come, and many
//! confirms of one paid session making one order. Against a real Stripe
//! fake (localstripe): `stripe.rs`.

mod after;
mod stripe;
mod webhooks;

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Reply, TestMesh};
use crate::journey::{Shopper, buyable};

/// The test provider's webhook secret in local and development.
const TEST_SECRET: &str = "whsec_storefront_test";

/// A new shopper with an open session for one unit of a product.
async fn open_session(t: &TestMesh) -> (Shopper<'_>, String) {
    let shopper = Shopper::new(t).await;
    let products = buyable(t, 1).await;
    let id = shopper.checkout_one(&products[0].0).await;
    (shopper, id)
}

async fn session(shopper: &Shopper<'_>, id: &str) -> Value {
    let read = shopper
        .send(Method::GET, &format!("/checkout/{id}"), None)
        .await;
    assert_eq!(read.status, 200, "{}", read.body);
    read.body
}

async fn paid_then_confirmed(t: TestMesh) {
    let (shopper, id) = open_session(&t).await;
    let total = session(&shopper, &id).await["totals"]["total"].clone();
    shopper
        .confirm_only(&id)
        .await
        .error(402, "PAYMENT_REQUIRED");

    let declined = shopper.pay(&id, "pm_card_visa_chargeDeclined").await;
    declined.error(402, "PAYMENT_DECLINED");
    assert_eq!(declined.body["payment"]["declineCode"], "generic_decline");
    assert_eq!(
        declined.body["payment"]["status"],
        "requires_payment_method"
    );
    assert_eq!(session(&shopper, &id).await["status"], "OPEN");
    shopper
        .confirm_only(&id)
        .await
        .error(402, "PAYMENT_REQUIRED");

    let paid = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(
        paid.status, 200,
        "the payment the decline started: {}",
        paid.body
    );
    assert_eq!(paid.body["status"], "authorized");
    assert_eq!(paid.body["provider"], "test");
    assert_eq!(paid.body["amount"], total, "the session's total");
    assert!(paid.body.get("declineCode").is_none());
    let shown = session(&shopper, &id).await;
    assert_eq!(shown["payment"]["id"], paid.body["id"]);
    assert_eq!(shown["payment"]["status"], "authorized");

    let confirmed = shopper.confirm_only(&id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().expect("an order");
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    let payment = &order.body["payment"];
    assert_eq!(payment["provider"], "test", "{}", order.body);
    assert_eq!(payment["status"], "authorized");
    assert_eq!(payment["amountAuthorized"], total);
    assert_eq!(payment["amountCaptured"]["centAmount"], 0);
    assert!(order.body.get("clientSecret").is_none());
    // A confirmed session's payment is answered as it is.
    let again = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(again.status, 200, "{}", again.body);
}
both_backends!(
    no_order_without_an_authorized_payment_and_a_decline_leaves_it_open,
    paid_then_confirmed
);

async fn three_d_secure_and_the_webhook_alone(t: TestMesh) {
    let (shopper, id) = open_session(&t).await;
    let started = shopper.pay(&id, "pm_card_threeDSecure2Required").await;
    assert_eq!(started.status, 201, "{}", started.body);
    assert_eq!(started.body["status"], "requires_action");
    let url = started.body["nextAction"]["url"].as_str().expect("a page");
    shopper
        .confirm_only(&id)
        .await
        .error(402, "PAYMENT_REQUIRED");
    // The page is no API resource: no version header, no token.
    let page = t
        .http
        .post(format!("{}{url}", t.base))
        .json(&json!({"passed": true}));
    let passed = t.send(page).await;
    assert_eq!(passed.status, 200, "{}", passed.body);
    assert_eq!(passed.body["status"], "authorized");
    // The shopper never confirms: the provider's webhook makes the order.
    let mut shown = Value::Null;
    for _ in 0..100 {
        shown = session(&shopper, &id).await;
        if shown["status"] == "CONFIRMED" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(shown["status"], "CONFIRMED", "{shown}");
    let late = shopper.confirm_only(&id).await;
    assert_eq!(late.body["orderId"], shown["orderId"], "the same order");
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 1, "{}", orders.body);
}
both_backends!(
    three_d_secure_passed_then_the_webhook_alone_makes_one_order,
    three_d_secure_and_the_webhook_alone
);

fn now_secs() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs() as i64)
}

/// Posts `body` to the test provider's webhook route signed at `at`.
async fn deliver(t: &TestMesh, body: &Value, secret: &str, at: i64) -> Reply {
    let bytes = body.to_string().into_bytes();
    let signature = storefront_payments::webhook::sign(secret, at, &bytes);
    let request = t
        .http
        .post(format!("{}/webhooks/payments/test", t.base))
        .header("Stripe-Signature", signature)
        .header("Content-Type", "application/json")
        .body(bytes);
    t.send(request).await
}

fn event(id: &str, kind: &str, payment: &str) -> Value {
    json!({"id": id, "type": kind, "data": {"object": {"id": payment, "object": "payment_intent"}}})
}

async fn webhooks_verified_and_once(t: TestMesh) {
    let (shopper, id) = open_session(&t).await;
    let paid = shopper.pay(&id, "pm_card_visa").await;
    let payment = paid.body["id"].as_str().expect("a payment").to_string();
    let authorized = event(
        "evt_a",
        "payment_intent.amount_capturable_updated",
        &payment,
    );
    let earlier = event("evt_b", "payment_intent.created", &payment);
    // The same delivery four times at once, then an older event after it.
    let now = now_secs();
    let replies =
        futures::future::join_all((0..4).map(|_| deliver(&t, &authorized, TEST_SECRET, now))).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["received"], true);
    }
    let late = deliver(&t, &earlier, TEST_SECRET, now).await;
    assert_eq!(late.status, 200, "{}", late.body);
    let shown = session(&shopper, &id).await;
    assert_eq!(shown["status"], "CONFIRMED", "{shown}");
    for reply in replies.iter().chain([&late]) {
        if let Some(order) = reply.body.get("orderId") {
            assert_eq!(*order, shown["orderId"]);
        }
    }
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 1, "one order: {}", orders.body);

    deliver(&t, &authorized, "whsec_someone_else", now)
        .await
        .error(400, "INVALID_SIGNATURE");
    deliver(&t, &authorized, TEST_SECRET, now - 301)
        .await
        .error(400, "INVALID_SIGNATURE");
    let unsigned = t
        .http
        .post(format!("{}/webhooks/payments/test", t.base))
        .json(&authorized);
    t.send(unsigned).await.error(400, "INVALID_SIGNATURE");
    let elsewhere = t
        .http
        .post(format!("{}/webhooks/payments/paypal", t.base))
        .header("Stripe-Signature", "t=1,v1=00")
        .json(&authorized);
    t.send(elsewhere).await.error(404, "NOT_FOUND");
    let huge = json!({"id": "evt_big", "padding": "x".repeat(300 * 1024)});
    deliver(&t, &huge, TEST_SECRET, now)
        .await
        .error(413, "PAYLOAD_TOO_LARGE");
}
both_backends!(
    webhooks_are_verified_and_apply_once_in_any_order,
    webhooks_verified_and_once
);

async fn sixteen_confirms(t: TestMesh) {
    let (shopper, id) = open_session(&t).await;
    let paid = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(paid.status, 201, "{}", paid.body);
    let replies = futures::future::join_all((0..16).map(|_| shopper.confirm_only(&id))).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.body["orderId"], replies[0].body["orderId"]);
    }
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 1, "{}", orders.body);
    let again = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(again.status, 200, "a confirmed session answers its payment");
    assert_eq!(again.body["id"], paid.body["id"]);
}
both_backends!(
    sixteen_confirms_of_one_paid_session_make_one_order,
    sixteen_confirms
);

async fn bad_methods(t: TestMesh) {
    let (shopper, id) = open_session(&t).await;
    let long = shopper.pay(&id, &"pm_x".repeat(100)).await;
    long.error(422, "VALIDATION_ERROR");
    assert_eq!(long.field_error(), ("paymentMethod", "TOO_LONG"));
    let unknown = shopper.pay(&id, "pm_card_unheard_of").await;
    unknown.error(422, "VALIDATION_ERROR");
    let not_text = shopper
        .send(
            Method::POST,
            &format!("/checkout/{id}/payment"),
            Some(json!({"paymentMethod": 42})),
        )
        .await;
    not_text.error(422, "VALIDATION_ERROR");
    let other = Shopper::new(&t).await;
    other.pay(&id, "pm_card_visa").await.error(404, "NOT_FOUND");
}
both_backends!(bad_payment_methods_are_refused_by_field, bad_methods);
