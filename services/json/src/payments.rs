//! A checkout's payment as the shopper's client sees it, and an order's as
//! a back office does (docs/payments.md).

use serde::{Deserialize, Serialize};
use storefront_proto::payments::v1 as pb;
use utoipa::ToSchema;

use crate::Invalid;
use crate::common::Money;

/// The API's word for a payment's status.
pub fn status_name(status: i32) -> &'static str {
    match pb::PaymentStatus::try_from(status) {
        Ok(pb::PaymentStatus::RequiresAction) => "requires_action",
        Ok(pb::PaymentStatus::Authorized) => "authorized",
        Ok(pb::PaymentStatus::Captured) => "captured",
        Ok(pb::PaymentStatus::Voided) => "voided",
        Ok(pb::PaymentStatus::Refunded) => "refunded",
        _ => "requires_payment_method",
    }
}

/// What the shopper does next (3-D Secure).
#[derive(Debug, Serialize, ToSchema)]
pub struct NextAction {
    /// `redirect_to_url` (open `url`) or `use_stripe_sdk` (Stripe.js's
    /// `handleNextAction` with the `clientSecret`).
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the shopper authenticates. The test provider's is this API's
    /// `POST /payments/test/{paymentId}/authenticate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A checkout session's payment.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Payment {
    /// The provider's id (`pi_...`).
    pub id: String,
    /// `test` or `stripe`.
    #[schema(example = "stripe")]
    pub provider: String,
    /// requires_payment_method (none yet, or the last one declined: see
    /// `declineCode`), requires_action (see `nextAction`), authorized (the
    /// session can be confirmed), captured, voided or refunded.
    #[schema(example = "authorized")]
    pub status: &'static str,
    /// The session's `totals.total` when the payment was started.
    pub amount: Money,
    /// For the provider's client library (Stripe.js) to confirm with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_action: Option<NextAction>,
    /// Why the last method was declined (the provider's code, e.g.
    /// `generic_decline`, `insufficient_funds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decline_code: Option<String>,
}

impl TryFrom<pb::Payment> for Payment {
    type Error = Invalid;
    fn try_from(p: pb::Payment) -> Result<Self, Invalid> {
        let amount = p
            .amount
            .map(Money::from)
            .ok_or_else(|| Invalid::new("payment amount missing"))?;
        Ok(Self {
            id: p.id,
            provider: p.provider,
            status: status_name(p.status),
            amount,
            client_secret: Some(p.client_secret).filter(|s| !s.is_empty()),
            next_action: p.next_action.map(|a| NextAction {
                kind: a.kind,
                url: Some(a.url).filter(|u| !u.is_empty()),
            }),
            decline_code: Some(p.decline_code).filter(|c| !c.is_empty()),
        })
    }
}

/// An order's payment, for a back office.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderPayment {
    pub provider: String,
    /// authorized, captured, voided or refunded.
    #[schema(example = "authorized")]
    pub status: &'static str,
    pub amount_authorized: Money,
    pub amount_captured: Money,
    pub amount_refunded: Money,
}

impl TryFrom<pb::Payment> for OrderPayment {
    type Error = Invalid;
    fn try_from(p: pb::Payment) -> Result<Self, Invalid> {
        let authorized = p
            .amount
            .ok_or_else(|| Invalid::new("payment amount missing"))?;
        let part = |cents: i64| {
            Money::from(storefront_proto::common::v1::Money {
                cent_amount: cents,
                ..authorized.clone()
            })
        };
        Ok(Self {
            provider: p.provider,
            status: status_name(p.status),
            amount_captured: part(p.amount_captured),
            amount_refunded: part(p.amount_refunded),
            amount_authorized: Money::from(authorized),
        })
    }
}

/// `POST /checkout/{sessionId}/payment`'s body (optional).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaymentBody {
    /// A payment method to confirm with at once (`pm_card_visa` with the
    /// test provider; a PaymentMethod id from Stripe.js with Stripe).
    /// Without one the payment waits for the client to confirm it with
    /// its `clientSecret`.
    #[schema(max_length = 255, example = "pm_card_visa")]
    pub payment_method: Option<String>,
}

/// `POST /payments/test/{paymentId}/authenticate`'s body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AuthenticateBody {
    /// Whether the shopper passed 3-D Secure.
    pub passed: bool,
}
