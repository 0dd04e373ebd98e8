//! The machine's table, row by row, without a store or a peer: each hold
//! state meeting each event, what it becomes and what is to be done.

use storefront_proto::Timestamp;
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::{CheckoutSession, CheckoutStatus};
use storefront_proto::common::v1::Money;
use storefront_proto::payments::v1::{Payment, PaymentStatus};

use super::*;
use storefront_platform::error::ErrorKind;

const NOW: Timestamp = Timestamp {
    seconds: 1_000_000,
    nanos: 0,
};
const LATER_MS: i64 = 1_000_000_000 + 600_000;

fn aud(cents: i64) -> Option<Money> {
    Some(Money {
        currency_code: "AUD".into(),
        cent_amount: cents,
        fraction_digits: 2,
    })
}

/// A payment of `cents` in `status`.
fn payment(status: PaymentStatus, cents: i64) -> Payment {
    Payment {
        id: "pi_1".into(),
        status: status as i32,
        amount: aud(cents),
        ..Default::default()
    }
}

/// An open session of 10.00 AUD, paid, whose hold is `hold`.
fn record(hold: HoldState) -> CheckoutRecord {
    let mut record = CheckoutRecord {
        session: Some(CheckoutSession {
            status: CheckoutStatus::Open as i32,
            total_price: aud(1000),
            payment: Some(payment(PaymentStatus::Authorized, 1000)),
            expires_at: Some(Timestamp {
                seconds: NOW.seconds + 300,
                nanos: 0,
            }),
            ..Default::default()
        }),
        planned_order_id: "o-1".into(),
        ..Default::default()
    };
    record.set_hold(hold);
    record
}

/// The machine's step, as every test here takes it: its effects, or the
/// refusal with the record left as it was; and whether it says it changed
/// the record, checked against the record itself (the runner writes only
/// what a step says it changed).
fn step(
    record: &mut CheckoutRecord,
    event: Event<'_>,
    now: &Timestamp,
) -> Result<Vec<Effect>, Refusal> {
    let before = record.clone();
    match super::step(record, event, now) {
        Ok(stepped) => {
            let changed = *record != before;
            assert_eq!(stepped.changed, changed, "{event:?} from {before:?}");
            Ok(stepped.effects)
        }
        Err(refusal) => {
            assert_eq!(*record, before, "a refused step changes nothing");
            Err(refusal)
        }
    }
}

/// The hold after `event` from `hold`, and the effects; or the refusal.
fn run(mut record: CheckoutRecord, event: Event<'_>) -> Outcome {
    step(&mut record, event, &NOW).map(|effects| (record.hold(), effects))
}

use HoldState::*;

/// The hold after a step and its effects, or the refusal.
type Outcome = Result<(HoldState, Vec<Effect>), Refusal>;

const SELL: Effect = Effect::Settle(Settle::Sell);
const RELEASE: Effect = Effect::Settle(Settle::Release);

#[test]
fn every_hold_state_meets_every_event_as_the_table_says() {
    let unclaimed = Event::Confirm { claimed: false };
    let claimed = Event::Confirm { claimed: true };
    let made = Event::OrderMade;
    let rows: Vec<(HoldState, Event<'_>, Outcome)> = vec![
        (Pending, Event::Held, Ok((Held, vec![]))),
        (Held, Event::Held, Ok((Held, vec![]))),
        (Released, Event::Held, Err(Refusal::Stood)),
        (Pending, Event::Release, Ok((Released, vec![RELEASE]))),
        (Held, Event::Release, Ok((Released, vec![RELEASE]))),
        (Released, Event::Release, Ok((Released, vec![RELEASE]))),
        (Selling, Event::Release, Err(Refusal::Stood)),
        (Sold, Event::Release, Err(Refusal::Stood)),
        (
            Held,
            unclaimed,
            Ok((Selling, vec![Effect::ClaimCart, Effect::CreateOrder])),
        ),
        (
            Selling,
            unclaimed,
            Ok((Selling, vec![Effect::ClaimCart, Effect::CreateOrder])),
        ),
        (
            Unspecified,
            unclaimed,
            Ok((Unspecified, vec![Effect::ClaimCart, Effect::CreateOrder])),
        ),
        (Released, unclaimed, Err(Refusal::Released)),
        (Pending, unclaimed, Err(Refusal::Released)),
        (Held, claimed, Ok((Selling, vec![Effect::CreateOrder]))),
        (Selling, claimed, Ok((Selling, vec![Effect::CreateOrder]))),
        (Sold, claimed, Ok((Sold, vec![Effect::CreateOrder]))),
        (
            Selling,
            Event::ClaimLost { taken: true },
            Ok((Released, vec![RELEASE])),
        ),
        (
            Selling,
            Event::ClaimLost { taken: false },
            Ok((Held, vec![])),
        ),
        (Held, Event::ClaimLost { taken: false }, Err(Refusal::Stood)),
        (Selling, Event::OrderRefused, Ok((Held, vec![]))),
        (Sold, Event::OrderRefused, Err(Refusal::Stood)),
        (Selling, made, Ok((Sold, vec![SELL]))),
        (Sold, made, Ok((Sold, vec![SELL]))),
        (Released, made, Ok((Released, vec![]))),
        (Unspecified, made, Ok((Unspecified, vec![]))),
        (
            Selling,
            Event::Due { claimed: true },
            Ok((Selling, vec![Effect::CreateOrder])),
        ),
        (
            Selling,
            Event::Due { claimed: false },
            Ok((Released, vec![RELEASE])),
        ),
        (Sold, Event::Due { claimed: false }, Ok((Sold, vec![SELL]))),
        (
            Unspecified,
            Event::Due { claimed: false },
            Ok((Unspecified, vec![Effect::Unlist])),
        ),
        (
            Held,
            Event::Due { claimed: false },
            Ok((Held, vec![Effect::DueAt(1_000_300_000)])),
        ),
    ];
    for (hold, event, expected) in rows {
        assert_eq!(
            run(record(hold), event),
            expected,
            "{hold:?} meets {event:?}"
        );
    }
}

#[test]
fn an_order_made_confirms_the_session_with_its_planned_id() {
    let mut held = record(Selling);
    step(&mut held, Event::OrderMade, &NOW).expect("made");
    let session = held.session.expect("a session");
    assert_eq!(session.status, CheckoutStatus::Confirmed as i32);
    assert_eq!(session.order_id, "o-1");
    let mut confirmed = record(Sold);
    step(&mut confirmed, Event::OrderMade, &NOW).expect("made");
    let refused = step(&mut confirmed, Event::Confirm { claimed: false }, &NOW);
    assert_eq!(refused, Err(Refusal::Confirmed));
}

#[test]
fn an_expired_or_replaced_session_is_not_confirmed_unless_its_cart_is_claimed() {
    let mut expired = record(Held);
    expired.session.as_mut().expect("a session").expires_at = Some(NOW);
    assert_eq!(
        run(expired.clone(), Event::Confirm { claimed: false }),
        Err(Refusal::Expired)
    );
    assert_eq!(
        run(expired.clone(), Event::Due { claimed: false }),
        Ok((Released, vec![RELEASE]))
    );
    let mut replaced = record(Held);
    replaced.superseded_by = "s-2".into();
    assert_eq!(
        run(replaced.clone(), Event::Confirm { claimed: false }),
        Err(Refusal::Superseded)
    );
    // A confirm that claimed the cart finishes: the cart is its order's.
    assert_eq!(
        run(replaced, Event::Confirm { claimed: true }),
        Ok((Selling, vec![Effect::CreateOrder]))
    );
}

#[test]
fn superseding_releases_unless_selling_and_drops_the_one_replaced_before() {
    let mut older = record(Held);
    older.supersedes = "s-0".into();
    let effects = step(&mut older, Event::Superseded { by: "s-2" }, &NOW).expect("replaced");
    assert_eq!(effects, [RELEASE, Effect::Drop("s-0".into())]);
    assert_eq!(
        (older.hold(), older.superseded_by.as_str()),
        (Released, "s-2")
    );
    assert_eq!(shown_status(&older, &NOW), CheckoutStatus::Expired);
    let mut selling = record(Selling);
    let effects = step(&mut selling, Event::Superseded { by: "s-2" }, &NOW).expect("replaced");
    assert_eq!((effects, selling.hold()), (vec![], Selling));
}

#[test]
fn extending_runs_once_and_never_past_the_carts_limit() {
    let extended = run(record(Held), Event::Extend { until_ms: LATER_MS });
    assert_eq!(extended, Ok((Held, vec![Effect::DueAt(LATER_MS)])));
    let mut once = record(Held);
    step(&mut once, Event::Extend { until_ms: LATER_MS }, &NOW).expect("extended");
    assert_eq!(
        run(
            once,
            Event::Extend {
                until_ms: LATER_MS + 1
            }
        ),
        Err(Refusal::ExtendedOnce)
    );
    let mut capped = record(Held);
    capped.hold_until_ms = 1_000_100_000;
    let limited = Event::Extend { until_ms: LATER_MS };
    assert_eq!(run(capped.clone(), limited), Err(Refusal::AtLimit));
    capped.hold_until_ms = 1_000_400_000;
    assert_eq!(
        run(capped, limited),
        Ok((Held, vec![Effect::DueAt(1_000_400_000)]))
    );
    let mut released = record(Released);
    assert_eq!(step(&mut released, limited, &NOW), Err(Refusal::Expired));
    let mut sold = record(Sold);
    step(&mut sold, Event::OrderMade, &NOW).expect("made");
    assert_eq!(run(sold, limited), Err(Refusal::Confirmed));
}

#[test]
fn each_refusal_is_a_409_with_its_code() {
    let codes = [
        (Refusal::Expired, codes::EXPIRED),
        (Refusal::Released, codes::EXPIRED),
        (Refusal::Superseded, codes::SUPERSEDED),
        (Refusal::Confirmed, codes::CONFIRMED),
        (Refusal::ExtendedOnce, codes::ALREADY_EXTENDED),
        (Refusal::AtLimit, codes::ALREADY_EXTENDED),
        (Refusal::Stood, codes::BUSY),
    ];
    for (refusal, code) in codes {
        let error = refusal.error();
        assert_eq!(
            (error.kind, error.code.as_ref()),
            (ErrorKind::Conflict, code)
        );
    }
}

/// A session lasts until its `expiresAt`, not until the second it falls in
/// begins.
#[test]
fn a_session_is_open_until_its_expiry_to_the_nanosecond() {
    let mut session = record(Held);
    let at = |seconds, nanos| Some(Timestamp { seconds, nanos });
    session.session.as_mut().expect("a session").expires_at = at(NOW.seconds, 999_999_999);
    assert_eq!(shown_status(&session, &NOW), CheckoutStatus::Open);
    session.session.as_mut().expect("a session").expires_at = at(NOW.seconds, 0);
    assert_eq!(shown_status(&session, &NOW), CheckoutStatus::Expired);
}

/// docs/checkout.md shows the table as this module's documentation has
/// it, row for row.
#[test]
fn the_documented_table_is_this_one() {
    let rows = |text: &'static str, prefix: &'static str| -> Vec<&'static str> {
        text.lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .filter(|l| l.starts_with('|'))
            .collect()
    };
    let here = rows(include_str!("machine.rs"), "//! ");
    let documented = rows(include_str!("../../../../docs/checkout.md"), "");
    let table: Vec<&str> = documented
        .into_iter()
        .skip_while(|row| !row.starts_with("| hold before"))
        .collect();
    assert!(
        here.len() > 10,
        "the table is in machine.rs's documentation"
    );
    assert_eq!(table, here);
}

#[test]
fn a_confirm_needs_a_payment_holding_exactly_the_total() {
    let unclaimed = Event::Confirm { claimed: false };
    let with = |p: Option<Payment>| {
        let mut r = record(Held);
        r.session.as_mut().expect("a session").payment = p;
        r
    };
    assert_eq!(run(with(None), unclaimed), Err(Refusal::Unpaid));
    for status in [
        PaymentStatus::RequiresPaymentMethod,
        PaymentStatus::RequiresAction,
        PaymentStatus::Voided,
    ] {
        let unpaid = with(Some(payment(status, 1000)));
        assert_eq!(run(unpaid, unclaimed), Err(Refusal::Unpaid), "{status:?}");
    }
    let stale = with(Some(payment(PaymentStatus::Authorized, 900)));
    assert_eq!(run(stale, unclaimed), Err(Refusal::PaymentStale));
    let mut other_currency = payment(PaymentStatus::Authorized, 1000);
    other_currency
        .amount
        .as_mut()
        .expect("an amount")
        .currency_code = "NZD".into();
    let stale = with(Some(other_currency));
    assert_eq!(run(stale, unclaimed), Err(Refusal::PaymentStale));
    // A confirm that already claimed the cart finishes whatever came since.
    let claimed = Event::Confirm { claimed: true };
    assert_eq!(
        run(with(None), claimed),
        Ok((Selling, vec![Effect::CreateOrder]))
    );
}

#[test]
fn a_payment_is_recorded_until_the_order_and_a_decline_counts_a_try() {
    let declined = payment(PaymentStatus::RequiresPaymentMethod, 1000);
    let mut r = record(Held);
    let event = Event::Paid {
        payment: &declined,
        declined: true,
        replaces: false,
    };
    assert_eq!(step(&mut r, event, &NOW), Ok(vec![]));
    assert_eq!(r.payment_attempts, 1);
    assert_eq!(
        r.session.as_ref().and_then(|s| s.payment.clone()),
        Some(declined.clone())
    );
    let mut confirmed = record(Sold);
    confirmed.session.as_mut().expect("a session").status = CheckoutStatus::Confirmed as i32;
    assert_eq!(
        run(
            confirmed,
            Event::Paid {
                payment: &declined,
                declined: false,
                replaces: false,
            }
        ),
        Err(Refusal::Confirmed)
    );
}

#[test]
fn a_session_awaiting_payment_holds_once_paid_for_its_total() {
    let awaiting = |p: Option<Payment>| {
        let mut r = record(Pending);
        let session = r.session.as_mut().expect("a session");
        session.awaiting_payment = true;
        session.payment = p;
        r
    };
    let unclaimed = Event::Confirm { claimed: false };
    assert_eq!(run(awaiting(None), unclaimed), Err(Refusal::Unpaid));
    let authorized = payment(PaymentStatus::Authorized, 1000);
    let paid = Event::Paid {
        payment: &authorized,
        declined: false,
        replaces: false,
    };
    assert_eq!(
        run(awaiting(None), paid),
        Ok((Pending, vec![Effect::HoldPaid]))
    );
    // For another total, or declined, it holds nothing yet.
    let stale = payment(PaymentStatus::Authorized, 900);
    let stale = Event::Paid {
        payment: &stale,
        declined: false,
        replaces: false,
    };
    assert_eq!(run(awaiting(None), stale), Ok((Pending, vec![])));
    let declined = payment(PaymentStatus::RequiresPaymentMethod, 1000);
    let declined = Event::Paid {
        payment: &declined,
        declined: true,
        replaces: false,
    };
    assert_eq!(run(awaiting(None), declined), Ok((Pending, vec![])));
    // Held, it awaits nothing more; a later read of the payment holds
    // nothing twice.
    let mut r = awaiting(Some(authorized.clone()));
    assert_eq!(step(&mut r, Event::Held, &NOW), Ok(vec![]));
    assert!(!r.session.as_ref().expect("a session").awaiting_payment);
    assert_eq!(run(r.clone(), paid), Ok((Held, vec![])));
    assert_eq!(
        run(r, unclaimed),
        Ok((Selling, vec![Effect::ClaimCart, Effect::CreateOrder]))
    );
    // Past its expiry, a payment holds nothing.
    let mut late = awaiting(None);
    late.session.as_mut().expect("a session").expires_at = Some(NOW);
    assert_eq!(run(late, paid), Ok((Pending, vec![])));
}

/// A webhook's or a void's word of a payment the session no longer has
/// (a shopper paid again since) changes nothing: recorded, it put the old
/// payment back, voided, and the confirm that followed answered 402 (seen
/// once in the whole test command, the e2e test of a market changed live).
/// A pay's new payment replaces the old one.
#[test]
fn a_late_word_of_a_replaced_payment_changes_nothing() {
    let mut old = payment(PaymentStatus::Voided, 1000);
    old.id = "pi_0".into();
    let word = |replaces| Event::Paid {
        payment: &old,
        declined: false,
        replaces,
    };
    let r = record(Held);
    assert_eq!(run(r.clone(), word(false)), Err(Refusal::Stood));
    let mut replaced = r.clone();
    assert_eq!(step(&mut replaced, word(true), &NOW), Ok(vec![]));
    let now = replaced.session.as_ref().and_then(|s| s.payment.clone());
    assert_eq!(now.map(|p| p.id), Some("pi_0".to_string()));
    // Of the session's own payment, or of a session without one, it applies.
    let authorized = payment(PaymentStatus::Authorized, 1000);
    let mut own = r;
    let same = Event::Paid {
        payment: &authorized,
        declined: false,
        replaces: false,
    };
    assert_eq!(step(&mut own, same, &NOW), Ok(vec![]));
}
