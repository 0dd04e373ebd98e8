//! A session's payment through the payments service's own code and its
//! test provider (Stripe's test methods): one payment per session however
//! often it is asked for, a decline and a second method, 3-D Secure
//! completed between the answer and the confirm, the provider out of
//! reach, and a webhook (or the shopper) making the one order.

use std::sync::atomic::Ordering;

use storefront_platform::error::ErrorKind;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CheckoutSession};
use storefront_proto::payments::v1::payment_service_server::PaymentService;
use storefront_proto::payments::v1::{MovePaymentRequest, Payment, PaymentStatus};

use super::fakes::{Mesh, mesh};

async fn open(m: &Mesh, cart: &Cart) -> CheckoutSession {
    let cart_id = cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default();
    let opened = m.checkout.open("c-1", &cart_id, "net-1", None).await;
    opened.expect("opened")
}

fn payment_of(session: &Option<CheckoutSession>) -> Payment {
    let session = session.as_ref().expect("a session");
    session.payment.clone().expect("a payment")
}

fn status(p: &Payment) -> PaymentStatus {
    PaymentStatus::try_from(p.status).expect("a status")
}

#[tokio::test]
async fn a_confirm_without_an_authorized_payment_is_402_and_makes_nothing() {
    let m = mesh(20);
    let session = open(&m, &m.cart(2).await).await;
    let refused = m.checkout.confirm("c-1", &session.id).await;
    let refused = refused.expect_err("unpaid");
    assert_eq!(
        (refused.kind, refused.code.as_ref()),
        (ErrorKind::PaymentRequired, "PAYMENT_REQUIRED")
    );
    let started = m
        .checkout
        .pay("c-1", &session.id, "")
        .await
        .expect("started");
    assert!(started.created);
    let payment = payment_of(&started.session);
    assert_eq!(status(&payment), PaymentStatus::RequiresPaymentMethod);
    let total = session.total_price.map(|t| t.cent_amount);
    assert_eq!(
        payment.amount.map(|a| a.cent_amount),
        total,
        "the session's total"
    );
    assert!(!payment.client_secret.is_empty());
    let again = m.checkout.confirm("c-1", &session.id).await;
    assert_eq!(again.expect_err("still unpaid").code, "PAYMENT_REQUIRED");
    assert_eq!(m.orders.made(), 0);
}

#[tokio::test]
async fn one_payment_per_session_a_decline_then_another_method() {
    let m = mesh(20);
    let session = open(&m, &m.cart(2).await).await;
    let declined = m
        .checkout
        .pay("c-1", &session.id, "pm_card_visa_chargeDeclined")
        .await
        .expect("answered");
    assert!(declined.declined && declined.created);
    let first = payment_of(&declined.session);
    assert_eq!(first.decline_code, "generic_decline");
    assert_eq!(status(&first), PaymentStatus::RequiresPaymentMethod);
    // The same declined method again is a new try, declined again.
    let again = m
        .checkout
        .pay("c-1", &session.id, "pm_card_visa_chargeDeclined")
        .await
        .expect("answered");
    assert!(again.declined && !again.created);
    let paid = m.pay(&session.id).await;
    assert!(!paid.declined && !paid.created);
    let payment = payment_of(&paid.session);
    assert_eq!(payment.id, first.id, "one payment for the session");
    assert_eq!(status(&payment), PaymentStatus::Authorized);
    assert!(payment.decline_code.is_empty());
    // Asked for again: the same authorized payment, nothing confirmed twice.
    let same = m.checkout.pay("c-1", &session.id, "pm_card_visa").await;
    assert_eq!(payment_of(&same.expect("answered").session), payment);
    match m.checkout.confirm("c-1", &session.id).await {
        Ok(Outcome::Confirmed(s)) => assert!(!s.order_id.is_empty()),
        other => panic!("confirmed, not {other:?}"),
    }
    let orders = m.orders.orders.lock().expect("orders");
    let order = orders.values().next().expect("one order");
    let on_order = order.payment.clone().expect("the order's payment");
    assert_eq!((on_order.id, on_order.status), (payment.id, payment.status));
}

#[tokio::test]
async fn three_d_secure_completed_after_the_answer_is_read_at_confirm() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    let started = m
        .checkout
        .pay("c-1", &session.id, "pm_card_threeDSecure2Required")
        .await
        .expect("answered");
    let payment = payment_of(&started.session);
    assert_eq!(status(&payment), PaymentStatus::RequiresAction);
    assert!(payment.next_action.is_some());
    let early = m.checkout.confirm("c-1", &session.id).await;
    assert_eq!(early.expect_err("not yet").code, "PAYMENT_REQUIRED");
    let test = m.payments.api.test.as_ref().expect("the test provider");
    test.complete_action(&payment.id, true).expect("passed");
    match m.checkout.confirm("c-1", &session.id).await {
        Ok(Outcome::Confirmed(s)) => {
            assert_eq!(status(&s.payment.expect("paid")), PaymentStatus::Authorized)
        }
        other => panic!("confirmed, not {other:?}"),
    }
}

#[tokio::test]
async fn the_provider_out_of_reach_is_503_and_a_retry_pays_once() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    m.payments.down.store(true, Ordering::SeqCst);
    let refused = m.checkout.pay("c-1", &session.id, "pm_card_visa").await;
    let refused = refused.expect_err("unreachable");
    assert_eq!(
        (refused.kind, refused.code.as_ref()),
        (ErrorKind::Unavailable, "PAYMENTS_UNAVAILABLE")
    );
    let unpaid = m.checkout.get("c-1", &session.id).await.expect("kept");
    assert!(unpaid.payment.is_none(), "nothing recorded");
    m.payments.down.store(false, Ordering::SeqCst);
    let paid = m.pay(&session.id).await;
    assert_eq!(
        status(&payment_of(&paid.session)),
        PaymentStatus::Authorized
    );
    assert!(matches!(
        m.checkout.confirm("c-1", &session.id).await,
        Ok(Outcome::Confirmed(_))
    ));
    assert_eq!(m.orders.made(), 1);
}

#[tokio::test]
async fn a_webhook_and_the_shopper_racing_make_one_order() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    let paid = m.pay(&session.id).await;
    let payment = payment_of(&paid.session);
    let (checkout, id) = (m.checkout.clone(), session.id.clone());
    let hooks: Vec<_> = (0..4)
        .map(|_| {
            let (checkout, id, pid) = (checkout.clone(), id.clone(), payment.id.clone());
            tokio::spawn(async move { checkout.payment_changed(&id, &pid, true).await })
        })
        .collect();
    let shopper = m.checkout.confirm("c-1", &session.id).await;
    let mut orders = Vec::new();
    for hook in hooks {
        let reply = hook.await.expect("ran").expect("answered");
        assert_eq!(reply.session_id, session.id);
        orders.push(reply.order_id);
    }
    let Ok(Outcome::Confirmed(confirmed)) = shopper else {
        panic!("the shopper's confirm answers the order");
    };
    orders.retain(|o| !o.is_empty());
    assert!(orders.iter().all(|o| *o == confirmed.order_id));
    assert_eq!(m.orders.made(), 1, "one order");
    // Another session's payment, or none, changes nothing.
    let other = m
        .checkout
        .payment_changed(&session.id, "pi_other", true)
        .await;
    assert!(other.expect("answered").session_id.is_empty());
    let none = m
        .checkout
        .payment_changed("no-such-session", &payment.id, true)
        .await;
    assert!(none.expect("answered").session_id.is_empty());
}

#[tokio::test]
async fn the_authorizations_webhook_confirms_from_the_record_alone() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    let payment = payment_of(&m.pay(&session.id).await.session);
    // The payments service said, verifying the event, that the payment
    // holds money, and the record holds it so: nothing to read again.
    m.payments.down.store(true, Ordering::SeqCst);
    let unread = m.checkout.payment_changed(&session.id, &payment.id, false);
    let unread = unread.await.expect_err("without that word it reads");
    assert_eq!(unread.code.as_ref(), "PAYMENTS_UNAVAILABLE");
    let reply = m.checkout.payment_changed(&session.id, &payment.id, true);
    let reply = reply.await.expect("confirmed unread");
    assert!(!reply.order_id.is_empty());
    assert_eq!(m.orders.made(), 1);
}

#[tokio::test]
async fn a_payment_canceled_at_the_provider_is_read_and_makes_no_order() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    let payment = payment_of(&m.pay(&session.id).await.session);
    let void = MovePaymentRequest {
        id: payment.id.clone(),
        idempotency_key: "provider-side".into(),
        ..Default::default()
    };
    let voided = m.payments.api.void_payment(tonic::Request::new(void));
    voided.await.expect("voided at the provider");
    // Its webhook: the provider's payment no longer holds money.
    let reply = m.checkout.payment_changed(&session.id, &payment.id, false);
    let reply = reply.await.expect("answered");
    assert!(reply.order_id.is_empty(), "no order of a canceled payment");
    assert_eq!(m.orders.made(), 0);
    let recorded = m.checkout.get("c-1", &session.id).await.expect("kept");
    assert_eq!(
        status(recorded.payment.as_ref().expect("kept")),
        PaymentStatus::Voided
    );
}

#[tokio::test]
async fn an_over_long_method_is_422_on_its_field() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    let long = "pm_".to_string() + &"x".repeat(300);
    let refused = m.checkout.pay("c-1", &session.id, &long).await;
    let refused = refused.expect_err("too long");
    assert_eq!(refused.kind, ErrorKind::Validation);
    assert_eq!(refused.violations[0].field, "paymentMethod");
    assert!(!refused.message.contains(&long), "the input is not echoed");
}

#[tokio::test]
async fn a_session_ended_without_an_order_lets_its_payment_go() {
    let m = mesh(20);
    let cart = m.cart(1).await;
    let first = open(&m, &cart).await;
    let paid = m.pay(&first.id).await;
    assert_eq!(
        status(&payment_of(&paid.session)),
        PaymentStatus::Authorized
    );
    // Checked out again: the first session is replaced, its stock and its
    // authorization let go; the new one is paid anew.
    let second = open(&m, &cart).await;
    let first = m.checkout.get("c-1", &first.id).await.expect("kept");
    let voided = first.payment.expect("its payment");
    assert_eq!(status(&voided), PaymentStatus::Voided);
    let paid = m.pay(&second.id).await;
    assert_ne!(payment_of(&paid.session).id, voided.id);
    assert!(matches!(
        m.checkout.confirm("c-1", &second.id).await,
        Ok(Outcome::Confirmed(_))
    ));
}

#[tokio::test]
async fn a_confirm_from_a_record_written_since_keeps_that_write() {
    let m = mesh(20);
    let session = open(&m, &m.cart(1).await).await;
    m.pay(&session.id).await;
    // The record as a webhook's step left it; then the shopper's extension.
    let seen = m.checkout.store_record(&session.id).await.expect("kept");
    m.extend_later(&session.id).await;
    let confirmed = m
        .checkout
        .confirm_from("c-1", &session.id, Some(seen.into()))
        .await;
    assert!(matches!(confirmed, Ok(Outcome::Confirmed(_))));
    let after = m.checkout.store_record(&session.id).await.expect("kept");
    assert!(after.value.extended, "the write in between is kept");
    assert!(super::machine::is_confirmed(&after.value));
    // A seed as stored: answered as confirmed, still one order.
    let again = m
        .checkout
        .confirm_from("c-1", &session.id, Some(after.into()))
        .await;
    assert!(matches!(again, Ok(Outcome::Confirmed(_))));
    assert_eq!(m.orders.made(), 1);
}
