//! A provider's word that a session's payment changed (a verified
//! webhook, passed on by the gateway): the payment is read again from the
//! payments service (the event's own fields are not trusted), recorded,
//! and a session it now pays for becomes its order, by the same confirm a
//! shopper calls, so that whichever of the two comes first makes the one
//! order. A payment that is not the session's current one changes nothing.
//!
//! The read is spared when it could teach nothing: the payments service,
//! verifying the event, read the payment holding money (`holds_money`),
//! and the session's record already holds that payment's money (its pay
//! call recorded the payments service's answer). That is the usual
//! delivery, the authorization's own, and the confirm it makes trusts
//! the record as a shopper's confirm does. Any other (a payment canceled
//! or failed at the provider, a 3-D Secure passed) is read and recorded.

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{PaymentChangedReply, PaymentWebhookReply};
use storefront_proto::payments::v1::VerifyWebhookRequest;

use super::Checkout;
use super::machine::{Event, is_confirmed};
use super::paid::{for_total, holds_money};
use super::runner::{Ran, Seen};

impl Checkout {
    /// A provider's delivery as the gateway received it: verified by the
    /// payments service (a refusal, such as a bad signature, answered as
    /// it is), then applied as [`Checkout::payment_changed`].
    pub async fn payment_webhook(
        &self,
        webhook: VerifyWebhookRequest,
    ) -> Result<PaymentWebhookReply, ServiceError> {
        let verified = self.payments.verify_webhook(webhook).await;
        let event = verified.map_err(|e| match e.refusal() {
            Some(refused) => refused,
            // The gateway verifies it then (its two-call path).
            None if e.not_served() => ServiceError::new(
                ErrorKind::PermissionDenied,
                "WEBHOOKS_NOT_SERVED",
                "the payments service does not verify webhooks for the cart: the gateway verifies them",
            ),
            None => e.unavailable(
                "PAYMENTS_UNAVAILABLE",
                "the payments service is unreachable; the delivery is to be sent again",
            ),
        })?;
        let mut reply = PaymentWebhookReply {
            event_id: event.id,
            r#type: event.r#type,
            order_id: String::new(),
        };
        if !event.reference.is_empty() {
            let (session_id, payment_id) = (&event.reference, &event.payment_id);
            let changed = self.payment_changed(session_id, payment_id, event.holds_money);
            reply.order_id = changed.await?.order_id;
        }
        Ok(reply)
    }

    pub async fn payment_changed(
        &self,
        session_id: &str,
        payment_id: &str,
        provider_holds_money: bool,
    ) -> Result<PaymentChangedReply, ServiceError> {
        let Ok(found) = self.store_record(session_id).await else {
            return Ok(PaymentChangedReply::default());
        };
        let current = found
            .value
            .session
            .as_ref()
            .and_then(|s| s.payment.as_ref());
        if current.is_none_or(|p| p.id != payment_id) {
            return Ok(PaymentChangedReply::default());
        }
        let mut reply = PaymentChangedReply {
            session_id: session_id.to_string(),
            order_id: String::new(),
        };
        if is_confirmed(&found.value) {
            reply.order_id = found.value.planned_order_id;
            return Ok(reply);
        }
        let payment = match current.filter(|p| provider_holds_money && holds_money(p)) {
            Some(known) => known.clone(),
            None => self.read_payment(payment_id).await?,
        };
        let event = Event::Paid {
            payment: &payment,
            declined: false,
            replaces: false,
        };
        let seen = match self
            .drive(session_id, event, Some(found.into()), None)
            .await?
        {
            Ran::Done(seen) => seen,
            Ran::Refused(record, _) => Seen::from(record),
        };
        if !(holds_money(&payment) && for_total(&seen.record, &payment)) {
            return Ok(reply);
        }
        let customer_id = seen.record.customer_id.clone();
        match self
            .confirm_from(&customer_id, session_id, Some(seen))
            .await
        {
            Ok(Outcome::Confirmed(session)) => reply.order_id = session.order_id,
            Ok(Outcome::Repriced(_)) => {
                tracing::info!(
                    session_id,
                    "a paid session was repriced at confirm: no order"
                );
            }
            Err(e) if e.kind.http_status() < 500 => {
                // An expired or replaced session, its stock gone: no order,
                // so the payment goes.
                tracing::info!(session_id, code = %e.code, "a paid session was not confirmed");
                let found = self.store_record(session_id).await?;
                self.let_go(&found.value).await;
            }
            Err(e) => return Err(e),
        }
        Ok(reply)
    }
}
