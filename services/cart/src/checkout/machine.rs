//! The checkout as one state machine: a session's state is its record's
//! status (OPEN, CONFIRMED), whether a newer session replaced it, its
//! expiry, and where the stock it holds stands (`HoldState`). Every change
//! of that state is `step(record, event) -> effects`, here and nowhere
//! else; the runner (`runner.rs`) applies a step by one compare-and-set of
//! the record and then carries out its effects, each of which either
//! succeeds or becomes the next event. A step changes nothing when it is
//! refused, and says whether it changed the record (`stepped.rs`): the
//! runner writes only a changed one.
//!
//! | hold before          | event                    | hold after | effects                   |
//! |----------------------|--------------------------|------------|---------------------------|
//! | PENDING, HELD        | Held                     | HELD       |                           |
//! | PENDING, HELD, RELEASED | Release               | RELEASED   | settle: release           |
//! | any                  | Superseded               | as Release | settle: release, drop the one it replaced |
//! | any (OPEN)           | Replacing                | same       | (remembers the one it replaces) |
//! | any (OPEN)           | Extend                   | same       | due at the new expiry     |
//! | PENDING, HELD (OPEN)  | Reprice                  | same       | (its shipping, totals and tax set) |
//! | any, not CONFIRMED   | Paid                     | same       | (its payment set; a decline counts a try) |
//! | PENDING, awaiting payment (OPEN) | Paid (authorized, its total) | same | hold it, counted as paid |
//! | HELD, SELLING, paid  | Confirm (cart unclaimed) | SELLING    | claim the cart, create the order |
//! | HELD, SELLING, unpaid | Confirm (cart unclaimed) | same      | refused: Unpaid (402), PaymentStale |
//! | PENDING, awaiting payment, unpaid | Confirm         | same      | refused: Unpaid (402)     |
//! | any, not CONFIRMED   | Confirm (cart claimed)   | SELLING from HELD, else as it was | create the order |
//! | SELLING              | ClaimLost (other order)  | RELEASED   | settle: release           |
//! | SELLING              | ClaimLost (cart changed) | HELD       |                           |
//! | SELLING              | OrderRefused             | HELD       | (the cart was given back) |
//! | SELLING, SOLD        | OrderMade                | SOLD       | session CONFIRMED; settle: sell |
//! | other                | OrderMade                | as it was  | session CONFIRMED         |
//! | SELLING              | Due (cart claimed)       | SELLING    | create the order          |
//! | SELLING              | Due (cart unclaimed)     | RELEASED   | settle: release           |
//! | SOLD                 | Due                      | SOLD       | settle: sell              |
//! | PENDING, HELD, RELEASED | Due                   | as Release, or due again when extended |
//!
//! A session is paid when its payment (`paid.rs`) is authorized for
//! exactly its total in its currency: a confirm needs it (Unpaid), and a
//! total changed since authorization (a reprice, another shipping method)
//! is PaymentStale, which the confirm answers by voiding the payment.
//!
//! A session past its holder's soft hold limit (`hold_ledgers`) opens
//! awaiting payment: PENDING, holding nothing, until a Paid with its
//! total makes the runner count it as paid and hold its lines (Held, or
//! Release with the refusal when they do not fit or are short).

use storefront_proto::Timestamp;
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::{CheckoutSession, CheckoutStatus};
use storefront_proto::payments::v1::{Payment, PaymentStatus};

use crate::holds::{at_millis, millis};

use super::stepped::Changed;

pub use super::refusal::{Refusal, codes};

/// What happens to a session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Event<'a> {
    /// The catalog holds the session's lines.
    Held,
    /// The hold goes back: a refused or failed hold, the guest's login.
    Release,
    /// A newer session of the cart replaced this one.
    Superseded { by: &'a str },
    /// This session replaces `previous`, to drop it in turn.
    Replacing { previous: &'a str },
    /// Once: the session's time (and its hold's) runs until `until_ms`.
    Extend { until_ms: i64 },
    /// Its shipping method, or its market, changed: the session's price
    /// (`totalPrice`, `totals`, `taxLines`, shipping) becomes `priced`'s.
    Reprice { priced: &'a CheckoutSession },
    /// The payment as the payments service last told of it (`declined`:
    /// this try's method was refused; the next try is a new one;
    /// `replaces`: a pay's payment, which may replace another; any other
    /// word of a payment, a webhook's or a void's, applies only to the
    /// session's current one, since a late word of a payment replaced
    /// since would undo the shopper's new one).
    Paid {
        payment: &'a Payment,
        declined: bool,
        replaces: bool,
    },
    /// A confirm, its cart repriced unchanged (`claimed`: or already
    /// claimed for this session's order, by a confirm that stopped).
    Confirm { claimed: bool },
    /// The confirm could not claim the cart: another order has it
    /// (`taken`), or it changed.
    ClaimLost { taken: bool },
    /// The orders service refused the order; the cart was given back.
    OrderRefused,
    /// The order exists.
    OrderMade,
    /// The sweep, at the session's expiry (past a confirm's grace).
    Due { claimed: bool },
}

/// What the runner does after a step, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Claim the cart for the planned order (ClaimLost when it fails).
    ClaimCart,
    /// Create the planned order (OrderMade, or OrderRefused).
    CreateOrder,
    /// Tell the catalog the hold is sold or released, then forget it
    /// (ledgers, the sweep's list); left to the sweep when that fails.
    Settle(Settle),
    /// List the session for the sweep at `ms`.
    DueAt(i64),
    /// Nothing held: off the sweep's list.
    Unlist,
    /// Release the session this one had replaced, and drop its record.
    Drop(String),
    /// Count the paid session's lines in its holders' ledgers (paid
    /// limits), then hold them (Held; Release when refused or short).
    HoldPaid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    Sell,
    Release,
}

pub fn is_confirmed(record: &CheckoutRecord) -> bool {
    record
        .session
        .as_ref()
        .is_some_and(|s| s.status == CheckoutStatus::Confirmed as i32)
}

/// The status a client sees at `now`: an open session past its expiry
/// (compared to the nanosecond), replaced, or whose stock went back is
/// EXPIRED.
pub fn shown_status(record: &CheckoutRecord, now: &Timestamp) -> CheckoutStatus {
    let Some(session) = record.session.as_ref() else {
        return CheckoutStatus::Expired;
    };
    let status = CheckoutStatus::try_from(session.status).unwrap_or(CheckoutStatus::Expired);
    let expired = session
        .expires_at
        .is_some_and(|t| (t.seconds, t.nanos) <= (now.seconds, now.nanos));
    let gone = !record.superseded_by.is_empty() || record.hold() == HoldState::Released;
    if status == CheckoutStatus::Open && (expired || gone) {
        return CheckoutStatus::Expired;
    }
    status
}

/// A step that applied: what the runner carries out after it, and whether
/// it changed the record (`stepped.rs`).
#[derive(Debug, PartialEq)]
pub struct Stepped {
    pub effects: Vec<Effect>,
    pub changed: bool,
}

/// Applies `event` to `record` at `now`: the effects to carry out, or why
/// it does not apply (and then `record` is as it was).
pub fn step(
    record: &mut CheckoutRecord,
    event: Event<'_>,
    now: &Timestamp,
) -> Result<Stepped, Refusal> {
    let mut changed = Changed::default();
    let effects = apply(record, event, now, &mut changed)?;
    Ok(Stepped {
        effects,
        changed: changed.changed(),
    })
}

fn apply(
    record: &mut CheckoutRecord,
    event: Event<'_>,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    use HoldState::*;
    let hold = record.hold();
    match event {
        Event::Held if hold == Pending => {
            ch.hold(record, Held);
            let session = ch.session(record);
            ch.set(&mut session.awaiting_payment, false);
            Ok(Vec::new())
        }
        // A paid hold taken by two reads of the payment at once.
        Event::Held if hold == Held => Ok(Vec::new()),
        Event::Held => Err(Refusal::Stood),
        Event::Release => release(record, ch),
        Event::Superseded { by } => Ok(superseded(record, by, ch)),
        Event::Replacing { previous } => {
            ch.set(&mut record.supersedes, previous.to_string());
            Ok(Vec::new())
        }
        Event::Extend { until_ms } => extend(record, until_ms, now, ch),
        Event::Reprice { priced } => reprice(record, priced, now, ch),
        Event::Paid {
            payment,
            declined,
            replaces,
        } => paid(record, payment, declined, replaces, now, ch),
        Event::Confirm { claimed } => confirm(record, claimed, now, ch),
        Event::ClaimLost { taken } if hold == Selling => {
            if taken {
                ch.hold(record, Released);
                return Ok(vec![Effect::Settle(Settle::Release)]);
            }
            ch.hold(record, Held);
            Ok(Vec::new())
        }
        Event::OrderRefused if hold == Selling => {
            ch.hold(record, Held);
            Ok(Vec::new())
        }
        Event::ClaimLost { .. } | Event::OrderRefused => Err(Refusal::Stood),
        Event::OrderMade => Ok(made(record, ch)),
        Event::Due { claimed } => due(record, claimed, now, ch),
    }
}

fn release(record: &mut CheckoutRecord, ch: &mut Changed) -> Result<Vec<Effect>, Refusal> {
    match record.hold() {
        HoldState::Pending | HoldState::Held | HoldState::Released => {
            ch.hold(record, HoldState::Released);
            Ok(vec![Effect::Settle(Settle::Release)])
        }
        _ => Err(Refusal::Stood),
    }
}

/// Replaced by `by`: the hold goes back unless a confirm already sells it
/// (that confirm finishes), and the session this one had replaced goes.
fn superseded(record: &mut CheckoutRecord, by: &str, ch: &mut Changed) -> Vec<Effect> {
    ch.set(&mut record.superseded_by, by.to_string());
    let mut effects = release(record, ch).unwrap_or_default();
    let older = std::mem::take(&mut record.supersedes);
    ch.mark(!older.is_empty());
    if !older.is_empty() && older != by {
        effects.push(Effect::Drop(older));
    }
    effects
}

fn extend(
    record: &mut CheckoutRecord,
    until_ms: i64,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    match shown_status(record, now) {
        CheckoutStatus::Confirmed => return Err(Refusal::Confirmed),
        CheckoutStatus::Open => {}
        _ => return Err(Refusal::Expired),
    }
    if record.extended {
        return Err(Refusal::ExtendedOnce);
    }
    // Never past the first expiry of the cart's sessions plus one
    // extension, whatever was checked out again since.
    let until = match record.hold_until_ms {
        0 => until_ms,
        limit => until_ms.min(limit),
    };
    let expires = record.session.as_ref().and_then(|s| s.expires_at);
    if expires.is_some_and(|t| millis(&t) >= until) {
        return Err(Refusal::AtLimit);
    }
    let session = ch.session(record);
    ch.set(&mut session.expires_at, Some(at_millis(until)));
    ch.set(&mut record.extended, true);
    if record.hold() == HoldState::Unspecified {
        return Ok(Vec::new());
    }
    Ok(vec![Effect::DueAt(until)])
}

/// Only an open session that no confirm is selling yet takes a new price.
fn reprice(
    record: &mut CheckoutRecord,
    priced: &CheckoutSession,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    use HoldState::*;
    if is_confirmed(record) {
        return Err(Refusal::Confirmed);
    }
    if !record.superseded_by.is_empty() {
        return Err(Refusal::Superseded);
    }
    let hold = record.hold();
    if shown_status(record, now) != CheckoutStatus::Open {
        return Err(if hold == Released {
            Refusal::Released
        } else {
            Refusal::Expired
        });
    }
    if matches!(hold, Selling | Sold) {
        return Err(Refusal::Stood);
    }
    let session = ch.session(record);
    ch.copy(&mut session.total_price, &priced.total_price);
    ch.copy(&mut session.totals, &priced.totals);
    ch.copy(&mut session.tax_lines, &priced.tax_lines);
    ch.copy(&mut session.shipping_options, &priced.shipping_options);
    ch.copy(&mut session.shipping_method_id, &priced.shipping_method_id);
    Ok(Vec::new())
}

/// Why a confirm does not apply to `record`, if it does not: a confirm
/// whose cart is claimed for this session's order finishes, whatever
/// happened since (expiry, a newer session): the cart is that order's.
/// Otherwise only a current, unexpired, paid session holding its stock
/// starts selling it. (Asked before the catalog prices the cart, without
/// a step's copy of the record.)
pub fn confirm_refused(
    record: &CheckoutRecord,
    claimed: bool,
    now: &Timestamp,
) -> Result<(), Refusal> {
    use HoldState::*;
    if is_confirmed(record) {
        return Err(Refusal::Confirmed);
    }
    if claimed {
        return Ok(());
    }
    let hold = record.hold();
    if !record.superseded_by.is_empty() {
        return Err(Refusal::Superseded);
    }
    if shown_status(record, now) != CheckoutStatus::Open {
        return Err(if hold == Released {
            Refusal::Released
        } else {
            Refusal::Expired
        });
    }
    if awaits_payment(record) {
        super::paid::fits(record)?;
    }
    if matches!(hold, Pending | Released | Sold) {
        return Err(Refusal::Released);
    }
    super::paid::fits(record)
}

fn confirm(
    record: &mut CheckoutRecord,
    claimed: bool,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    confirm_refused(record, claimed, now)?;
    if record.hold() == HoldState::Held {
        ch.hold(record, HoldState::Selling);
    }
    Ok(if claimed {
        vec![Effect::CreateOrder]
    } else {
        vec![Effect::ClaimCart, Effect::CreateOrder]
    })
}

/// Records `payment` on an unconfirmed session; a decline (or a void)
/// counts a try, so the next one is a new idempotency key. A confirmed
/// session's payment is its order's to follow.
fn paid(
    record: &mut CheckoutRecord,
    payment: &Payment,
    declined: bool,
    replaces: bool,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    if is_confirmed(record) {
        return Err(Refusal::Confirmed);
    }
    let current = record.session.as_ref().and_then(|s| s.payment.as_ref());
    if !replaces && current.is_some_and(|p| p.id != payment.id) {
        return Err(Refusal::Stood);
    }
    let session = ch.session(record);
    if session.payment.as_ref() != Some(payment) {
        session.payment = Some(payment.clone());
        ch.mark(true);
    }
    if declined || super::paid::status(payment) == PaymentStatus::Voided {
        record.payment_attempts += 1;
        ch.mark(true);
    }
    let holds_now = awaits_payment(record)
        && record.hold() == HoldState::Pending
        && shown_status(record, now) == CheckoutStatus::Open
        && super::paid::fits(record).is_ok();
    Ok(if holds_now {
        vec![Effect::HoldPaid]
    } else {
        Vec::new()
    })
}

/// Past its holder's soft limit: it holds nothing until paid.
pub fn awaits_payment(record: &CheckoutRecord) -> bool {
    record.session.as_ref().is_some_and(|s| s.awaiting_payment)
}

fn made(record: &mut CheckoutRecord, ch: &mut Changed) -> Vec<Effect> {
    let order_id = record.planned_order_id.clone();
    let session = ch.session(record);
    ch.set(&mut session.status, CheckoutStatus::Confirmed as i32);
    ch.set(&mut session.order_id, order_id);
    match record.hold() {
        HoldState::Selling | HoldState::Sold => {
            ch.hold(record, HoldState::Sold);
            vec![Effect::Settle(Settle::Sell)]
        }
        // Nothing held (stored before holds), or released under a claim.
        _ => Vec::new(),
    }
}

fn due(
    record: &mut CheckoutRecord,
    claimed: bool,
    now: &Timestamp,
    ch: &mut Changed,
) -> Result<Vec<Effect>, Refusal> {
    use HoldState::*;
    match record.hold() {
        Selling if claimed => Ok(vec![Effect::CreateOrder]),
        Selling => {
            ch.hold(record, Released);
            Ok(vec![Effect::Settle(Settle::Release)])
        }
        Sold => Ok(vec![Effect::Settle(Settle::Sell)]),
        Unspecified => Ok(vec![Effect::Unlist]),
        Pending | Held | Released => {
            let expires = record.session.as_ref().and_then(|s| s.expires_at);
            match expires {
                // Extended since it was listed: due later.
                Some(at) if shown_status(record, now) == CheckoutStatus::Open => {
                    Ok(vec![Effect::DueAt(millis(&at))])
                }
                _ => release(record, ch),
            }
        }
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
