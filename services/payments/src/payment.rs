//! A payment as every provider reports it: its state, what it is for, and
//! what was authorized, captured and refunded of it.

use serde::{Deserialize, Serialize};

/// An amount in a currency's minor units (ISO 4217 code).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Money {
    pub currency: String,
    pub amount: i64,
}

/// Where a payment stands (the storefront's words; Stripe's in brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    /// No method yet, or the last one was declined
    /// (`requires_payment_method`).
    RequiresPaymentMethod,
    /// The shopper must act, e.g. 3-D Secure (`requires_action`).
    RequiresAction,
    /// The amount is held on the method (`requires_capture`).
    Authorized,
    /// Taken, in whole or in part (`succeeded`).
    Captured,
    /// The hold was let go before capture (`canceled`).
    Voided,
    /// Given back, in whole (`amount_refunded == amount_captured`).
    Refunded,
}

impl PaymentStatus {
    /// Whether a confirm may turn it into an order.
    pub fn is_authorized(self) -> bool {
        matches!(self, Self::Authorized | Self::Captured)
    }
}

/// What the shopper must do next (3-D Secure's page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextAction {
    /// `redirect_to_url` or `use_stripe_sdk`, as Stripe names them.
    pub kind: String,
    pub url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payment {
    /// The provider's id (`pi_...` for Stripe and the test provider).
    pub id: String,
    pub status: PaymentStatus,
    pub amount: Money,
    pub amount_captured: i64,
    pub amount_refunded: i64,
    /// What the client confirms with, where the provider has one.
    pub client_secret: Option<String>,
    pub next_action: Option<NextAction>,
    /// The method last tried, and why it was declined if it was.
    pub payment_method: Option<String>,
    pub decline_code: Option<String>,
    /// What it pays for (a checkout session), as the provider keeps it.
    pub reference: String,
}
