//! The test provider as a client meets it: Stripe's test methods, each
//! state change once per idempotency key, and its deliveries signed so
//! that its own webhook check (Stripe's) takes them.

use std::task::{Context, Poll, Waker};

use super::*;

const SECRET: &str = "whsec_test";

/// The answer of a provider that answers at once (the test provider).
fn now<T>(mut answer: Answer<'_, T>) -> Result<T, PaymentError> {
    let mut cx = Context::from_waker(Waker::noop());
    match answer.as_mut().poll(&mut cx) {
        Poll::Ready(result) => result,
        Poll::Pending => panic!("the test provider answers at once"),
    }
}

fn aud(amount: i64) -> Money {
    Money {
        currency: "AUD".into(),
        amount,
    }
}

#[test]
fn visa_authorizes_and_a_capture_then_refunds_take_what_was_held() {
    let p = TestProvider::new(SECRET);
    let created = now(p.create(aud(4995), "cs-1", "k-create", None)).expect("created");
    assert_eq!(created.status, PaymentStatus::RequiresPaymentMethod);
    assert!(
        created
            .client_secret
            .as_deref()
            .is_some_and(|s| s.starts_with(&created.id))
    );
    let id = created.id.clone();
    let authorized = now(p.confirm(&id, VISA, "k-confirm")).expect("authorized");
    assert_eq!(authorized.status, PaymentStatus::Authorized);
    assert!(authorized.status.is_authorized());
    let captured = now(p.capture(&id, None, "k-capture")).expect("captured");
    assert_eq!(
        (captured.status, captured.amount_captured),
        (PaymentStatus::Captured, 4995)
    );
    let part = now(p.refund(&id, Some(995), "k-refund-1")).expect("a part back");
    assert_eq!(
        (part.status, part.amount_refunded),
        (PaymentStatus::Captured, 995)
    );
    let too_much = now(p.refund(&id, Some(4001), "k-refund-2"));
    assert!(matches!(too_much, Err(PaymentError::Invalid(_))));
    let rest = now(p.refund(&id, None, "k-refund-3")).expect("the rest back");
    assert_eq!(
        (rest.status, rest.amount_refunded),
        (PaymentStatus::Refunded, 4995)
    );
    let voided = now(p.void(&id, "k-void"));
    assert!(
        matches!(voided, Err(PaymentError::State(_))),
        "a refunded payment"
    );
}

#[test]
fn a_decline_leaves_the_payment_waiting_for_another_method() {
    let p = TestProvider::new(SECRET);
    let id = now(p.create(aud(1000), "cs-1", "k-1", None)).unwrap().id;
    let declined = now(p.confirm(&id, DECLINED, "k-2"));
    assert_eq!(
        declined,
        Err(PaymentError::Declined {
            decline_code: "generic_decline".into()
        })
    );
    let waiting = now(p.get(&id)).unwrap();
    assert_eq!(waiting.status, PaymentStatus::RequiresPaymentMethod);
    assert_eq!(waiting.decline_code.as_deref(), Some("generic_decline"));
    let second = now(p.confirm(&id, VISA, "k-3")).expect("another method");
    assert_eq!(second.status, PaymentStatus::Authorized);
    assert_eq!(second.decline_code, None);
}

#[test]
fn three_d_secure_waits_for_the_shopper() {
    let p = TestProvider::new(SECRET);
    let paid = now(p.create(aud(1000), "cs-1", "k-1", Some(THREE_D_SECURE))).unwrap();
    assert_eq!(paid.status, PaymentStatus::RequiresAction);
    let action = paid.next_action.expect("a page to show");
    assert_eq!(action.kind, "redirect_to_url");
    assert!(
        now(p.capture(&paid.id, None, "k-2")).is_err(),
        "nothing held yet"
    );
    let done = p.complete_action(&paid.id, true).expect("authenticated");
    assert_eq!(
        (done.status, done.next_action),
        (PaymentStatus::Authorized, None)
    );
    let again = p.complete_action(&paid.id, true);
    assert!(matches!(again, Err(PaymentError::State(_))));
}

#[test]
fn a_key_changes_a_payment_once_and_belongs_to_one_request() {
    let p = TestProvider::new(SECRET);
    let first = now(p.create(aud(1000), "cs-1", "k-1", Some(VISA))).unwrap();
    let again = now(p.create(aud(1000), "cs-1", "k-1", Some(VISA))).unwrap();
    assert_eq!(first, again, "the same payment, not a second");
    let other = now(p.create(aud(2000), "cs-1", "k-1", Some(VISA)));
    assert!(matches!(other, Err(PaymentError::Invalid(_))));
    let captured = now(p.capture(&first.id, Some(400), "k-cap")).unwrap();
    let repeated = now(p.capture(&first.id, Some(400), "k-cap")).unwrap();
    assert_eq!(captured, repeated);
    // A repeated refusal is the same refusal.
    let declined = now(p.create(aud(1000), "cs-1", "k-d", Some(DECLINED)));
    assert_eq!(
        declined,
        now(p.create(aud(1000), "cs-1", "k-d", Some(DECLINED)))
    );
}

#[test]
fn bad_input_is_refused() {
    let p = TestProvider::new(SECRET);
    for money in [
        aud(0),
        aud(-5),
        Money {
            currency: "aud".into(),
            amount: 100,
        },
    ] {
        let refused = now(p.create(money, "cs-1", "k", None));
        assert!(matches!(refused, Err(PaymentError::Invalid(_))));
    }
    let id = now(p.create(aud(100), "cs-1", "k-ok", None)).unwrap().id;
    for method in ["", &"m".repeat(MAX_METHOD_CHARS + 1), "pm_card_unknown"] {
        let refused = now(p.confirm(&id, method, &format!("k-{}", method.len())));
        assert!(matches!(refused, Err(PaymentError::Invalid(_))), "{method}");
    }
    assert!(matches!(
        now(p.get("pi_nope")),
        Err(PaymentError::NotFound(_))
    ));
}

#[test]
fn every_change_is_a_signed_delivery_its_webhook_check_takes() {
    let p = TestProvider::new(SECRET);
    let id = now(p.create(aud(1000), "cs-1", "k-1", Some(VISA)))
        .unwrap()
        .id;
    now(p.capture(&id, None, "k-2")).unwrap();
    let deliveries = p.deliveries();
    let kinds: Vec<String> = deliveries
        .iter()
        .map(|(header, body)| {
            let at: i64 = header[2..header.find(',').unwrap()].parse().unwrap();
            let event = p.webhook(header, body, at).expect("verified");
            assert_eq!(event.payment_id, id);
            assert_eq!(event.amount, Some(aud(1000)));
            event.kind
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "payment_intent.amount_capturable_updated",
            "payment_intent.succeeded"
        ]
    );
    assert!(p.deliveries().is_empty(), "each delivered once");
    let (header, body) = &deliveries[0];
    let at: i64 = header[2..header.find(',').unwrap()].parse().unwrap();
    assert!(p.webhook(header, b"{}", at).is_err(), "another body");
    let forged = TestProvider::new("whsec_other");
    assert!(forged.webhook(header, body, at).is_err(), "another secret");
}

#[test]
fn deliveries_waiting_for_their_deliverer_are_bounded() {
    let p = TestProvider::new(SECRET);
    for n in 0..MAX_PENDING_DELIVERIES + 5 {
        let key = format!("k-{n}");
        now(p.create(aud(100), "cs-1", &key, Some(VISA))).expect("authorized");
    }
    let kept = p.deliveries();
    assert_eq!(kept.len(), MAX_PENDING_DELIVERIES, "the oldest went");
    assert!(p.deliveries().is_empty(), "taken once");
}
