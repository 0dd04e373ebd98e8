//! Whether a session's payment pays for it: authorized (or captured), for
//! exactly its total in its currency. The machine's Paid records it.

use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::payments::v1::{Payment, PaymentStatus};

use super::refusal::Refusal;

pub fn status(payment: &Payment) -> PaymentStatus {
    PaymentStatus::try_from(payment.status).unwrap_or_default()
}

/// Whether a payment holds money (authorized, or already captured).
pub fn holds_money(payment: &Payment) -> bool {
    matches!(
        status(payment),
        PaymentStatus::Authorized | PaymentStatus::Captured
    )
}

/// Whether `payment` is for exactly the session's total.
pub fn for_total(record: &CheckoutRecord, payment: &Payment) -> bool {
    let total = record.session.as_ref().and_then(|s| s.total_price.as_ref());
    match (total, payment.amount.as_ref()) {
        (Some(total), Some(amount)) => {
            total.cent_amount == amount.cent_amount && total.currency_code == amount.currency_code
        }
        _ => false,
    }
}

/// A confirm's condition: the session's payment holds its total.
pub(super) fn fits(record: &CheckoutRecord) -> Result<(), Refusal> {
    let payment = record.session.as_ref().and_then(|s| s.payment.as_ref());
    match payment {
        Some(p) if holds_money(p) && for_total(record, p) => Ok(()),
        Some(p) if holds_money(p) => Err(Refusal::PaymentStale),
        _ => Err(Refusal::Unpaid),
    }
}
