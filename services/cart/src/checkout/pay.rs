//! `POST /checkout/{id}/payment`: the session's payment of its total,
//! started once (an idempotency key per session, total and try, so
//! concurrent or retried calls meet the same payment at the provider) and
//! confirmed with a method when one is given. A payment for another total
//! than the session's now (its shipping changed) is voided and a new one
//! started. Every answer is recorded by the machine's Paid.

use storefront_platform::client::call::CallError;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::{CheckoutStatus, PayCheckoutReply};
use storefront_proto::error::{FieldViolation, codes as common};
use storefront_proto::payments::v1::{
    ConfirmPaymentRequest, CreatePaymentRequest, GetPaymentRequest, MovePaymentRequest, Payment,
    PaymentStatus,
};

use super::machine::{Event, Refusal, is_confirmed, shown_status};
use super::paid::{for_total, holds_money, status};
use super::runner::{Ran, Seen};
use super::{Checkout, ids, view};
use crate::carts::now;
use storefront_domain::payment_keys::key;

/// The longest payment method id taken (Stripe's ids are far shorter).
pub const MAX_METHOD_CHARS: usize = 255;

/// A refusal of the payments service as the shopper sees it: its own 4xx,
/// or 503 when it (or its provider) is out of reach.
fn payments_error(error: CallError) -> ServiceError {
    match error.refusal() {
        Some(refused) => refused,
        None => error.unavailable(
            "PAYMENTS_UNAVAILABLE",
            "the payment provider is unreachable; retry the payment",
        ),
    }
}

fn check_method(method: &str) -> Result<(), ServiceError> {
    if method.chars().count() <= MAX_METHOD_CHARS {
        return Ok(());
    }
    let message = format!("a payment method id is at most {MAX_METHOD_CHARS} characters");
    Err(
        ServiceError::new(ErrorKind::Validation, common::VALIDATION_ERROR, &message)
            .with_violation(FieldViolation::new(
                "paymentMethod",
                common::TOO_LONG,
                message,
            )),
    )
}

impl Checkout {
    pub async fn pay(
        &self,
        customer_id: &str,
        session_id: &str,
        method: &str,
    ) -> Result<PayCheckoutReply, ServiceError> {
        check_method(method)?;
        let found = self.record(customer_id, session_id).await?;
        let record = &found.value;
        if is_confirmed(record) {
            return Ok(reply(found.value, false, false));
        }
        payable(record)?;
        let (payment, created) = self.current_payment(record).await?;
        let (payment, declined) = match status(&payment) {
            PaymentStatus::RequiresPaymentMethod if !method.is_empty() => {
                self.confirm_with(record, &payment, method).await?
            }
            _ => (payment, false),
        };
        // The session's payment as this pay made it: a new one replaces
        // the one it voided.
        let event = Event::Paid {
            payment: &payment,
            declined,
            replaces: true,
        };
        match self
            .drive(session_id, event, Some(found.into()), None)
            .await?
        {
            Ran::Done(seen) => Ok(reply(seen.record, created, declined)),
            Ran::Refused(record, Refusal::Confirmed) => Ok(reply(record, false, false)),
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }

    /// The session's payment as the provider has it now, when it can still
    /// pay the session's total; else a new one (the stale one voided).
    async fn current_payment(
        &self,
        record: &CheckoutRecord,
    ) -> Result<(Payment, bool), ServiceError> {
        let known = record.session.as_ref().and_then(|s| s.payment.as_ref());
        let mut attempts = record.payment_attempts;
        if let Some(known) = known {
            let payment = self.read_payment(&known.id).await?;
            let usable = !matches!(
                status(&payment),
                PaymentStatus::Voided | PaymentStatus::Refunded
            );
            if usable && for_total(record, &payment) {
                return Ok((payment, false));
            }
            if usable {
                self.void_payment(record, &payment).await?;
                // The void is a try: the next payment takes a new key.
                attempts += 1;
            }
        }
        let (id, _) = ids(record);
        let total = record
            .session
            .as_ref()
            .and_then(|s| s.total_price.clone())
            .unwrap_or_default();
        let message = CreatePaymentRequest {
            amount: total.cent_amount,
            currency_code: total.currency_code.clone(),
            idempotency_key: key(
                id,
                &format!(
                    "create-{attempts}-{}{}",
                    total.cent_amount, total.currency_code
                ),
            ),
            reference: id.to_string(),
            payment_method: String::new(),
        };
        let created = self.payments.create_payment(message).await;
        Ok((created.map_err(payments_error)?, true))
    }

    /// Confirms `payment` with `method`: the payment after, and whether
    /// the method was declined.
    async fn confirm_with(
        &self,
        record: &CheckoutRecord,
        payment: &Payment,
        method: &str,
    ) -> Result<(Payment, bool), ServiceError> {
        let (id, _) = ids(record);
        let attempt = record.payment_attempts;
        let message = ConfirmPaymentRequest {
            id: payment.id.clone(),
            payment_method: method.to_string(),
            idempotency_key: key(id, &format!("confirm-{}-{attempt}", payment.id)),
        };
        let confirmed = self.payments.confirm_payment(message).await;
        let confirmed = confirmed.map_err(payments_error)?;
        let declined = !confirmed.decline_code.is_empty()
            && status(&confirmed) == PaymentStatus::RequiresPaymentMethod;
        Ok((confirmed, declined))
    }

    pub(crate) async fn read_payment(&self, payment_id: &str) -> Result<Payment, ServiceError> {
        let message = GetPaymentRequest {
            id: payment_id.to_string(),
        };
        let read = self.payments.get_payment(message).await;
        read.map_err(payments_error)
    }

    /// Lets a payment of the session go (a total that changed, a session
    /// that ended without an order).
    pub(crate) async fn void_payment(
        &self,
        record: &CheckoutRecord,
        payment: &Payment,
    ) -> Result<Payment, ServiceError> {
        let (id, _) = ids(record);
        let message = MovePaymentRequest {
            id: payment.id.clone(),
            amount: 0,
            idempotency_key: key(id, &format!("void-{}", payment.id)),
        };
        let voided = self.payments.void_payment(message).await;
        voided.map_err(payments_error)
    }

    /// Lets the payment of a session that ended without an order go
    /// (expired, replaced, its stock released): voided and recorded. A
    /// payment that cannot be voided now (the provider out of reach) is
    /// logged; an authorization never captured lapses at the provider
    /// (Stripe's after 7 days).
    pub(crate) async fn let_go(&self, record: &CheckoutRecord) {
        let payment = record.session.as_ref().and_then(|s| s.payment.as_ref());
        let open = |p: &&Payment| {
            matches!(
                status(p),
                PaymentStatus::RequiresPaymentMethod
                    | PaymentStatus::RequiresAction
                    | PaymentStatus::Authorized
            )
        };
        let Some(payment) = payment.filter(open) else {
            return;
        };
        if is_confirmed(record) {
            return;
        }
        let (id, _) = ids(record);
        let voided = match self.void_payment(record, payment).await {
            Ok(voided) => voided,
            Err(e) => {
                tracing::warn!(error = %e, session_id = id, "a checkout's payment was not voided");
                return;
            }
        };
        let event = Event::Paid {
            payment: &voided,
            declined: false,
            replaces: false,
        };
        if let Err(e) = self.drive(id, event, None, None).await {
            tracing::warn!(error = %e, session_id = id, "a voided payment was not recorded");
        }
    }

    /// The session's payment read again from the provider when it may have
    /// moved without the session knowing (the shopper's 3-D Secure page, a
    /// webhook not yet come), and recorded: the record after.
    pub(crate) async fn refresh_payment(&self, seen: Seen) -> Result<Seen, ServiceError> {
        let known = seen
            .record
            .session
            .as_ref()
            .and_then(|s| s.payment.as_ref());
        let Some(known) = known.filter(|p| !holds_money(p)) else {
            return Ok(seen);
        };
        let payment = self.read_payment(&known.id).await?;
        if payment == *known {
            return Ok(seen);
        }
        let (id, _) = ids(&seen.record);
        let id = id.to_string();
        let event = Event::Paid {
            payment: &payment,
            declined: false,
            replaces: false,
        };
        match self.drive(&id, event, Some(seen), None).await? {
            Ran::Done(seen) => Ok(seen),
            Ran::Refused(record, _) => Ok(record.into()),
        }
    }
}

/// Only an open session (unexpired, current, holding its stock) is paid.
fn payable(record: &CheckoutRecord) -> Result<(), ServiceError> {
    if !record.superseded_by.is_empty() {
        return Err(Refusal::Superseded.error());
    }
    match shown_status(record, &now()) {
        CheckoutStatus::Open => Ok(()),
        _ => Err(Refusal::Expired.error()),
    }
}

fn reply(record: CheckoutRecord, created: bool, declined: bool) -> PayCheckoutReply {
    PayCheckoutReply {
        session: Some(view(record)),
        created,
        declined,
    }
}
