//! Why a step of the checkout's machine does not apply, and how each
//! refusal is answered: the one place a checkout refusal becomes an error.

use std::fmt;

use storefront_platform::error::{ErrorKind, ServiceError};

/// The codes of the checkout's refusals (409 unless said).
pub mod codes {
    pub const EXPIRED: &str = "CHECKOUT_EXPIRED";
    pub const SUPERSEDED: &str = "CHECKOUT_SUPERSEDED";
    pub const CONFIRMED: &str = "CHECKOUT_CONFIRMED";
    pub const ALREADY_EXTENDED: &str = "CHECKOUT_ALREADY_EXTENDED";
    pub const BUSY: &str = storefront_proto::error::codes::CONCURRENT_MODIFICATION;
    /// 503: the orders service could not be reached.
    pub const ORDERS_UNAVAILABLE: &str = "ORDERS_UNAVAILABLE";
    /// 402: no authorized payment of the session's total.
    pub const PAYMENT_REQUIRED: &str = "PAYMENT_REQUIRED";
    /// 409: the total changed since the payment was authorized.
    pub const CHECKOUT_REPRICED: &str = "CHECKOUT_REPRICED";
}

/// Why a step does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The state moved on (another step got there first): nothing to do.
    Stood,
    Confirmed,
    Expired,
    Superseded,
    /// The stock the session held went back.
    Released,
    ExtendedOnce,
    /// Extended as far as its cart's first expiry plus one checkout time.
    AtLimit,
    /// No payment authorized for the session's total.
    Unpaid,
    /// Authorized, but for another total than the session's now.
    PaymentStale,
}

impl Refusal {
    pub fn error(self) -> ServiceError {
        let (code, message) = match self {
            Refusal::Stood => (codes::BUSY, "the checkout moved on meanwhile; retry"),
            Refusal::Confirmed => (codes::CONFIRMED, "the checkout is confirmed"),
            Refusal::Expired => (codes::EXPIRED, "the checkout session has expired"),
            Refusal::Superseded => (
                codes::SUPERSEDED,
                "a newer checkout of this cart replaced this session; confirm that one",
            ),
            Refusal::Released => (
                codes::EXPIRED,
                "the stock this checkout held was released; check out again",
            ),
            Refusal::ExtendedOnce => (
                codes::ALREADY_EXTENDED,
                "a checkout is extended once; check out again",
            ),
            Refusal::AtLimit => (
                codes::ALREADY_EXTENDED,
                "this checkout already holds its stock as long as it may \
                 (its cart's first checkout time plus one extension)",
            ),
            Refusal::Unpaid => return unpaid(),
            Refusal::PaymentStale => return stale(),
        };
        ServiceError::new(ErrorKind::Conflict, code, message)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error().message)
    }
}

fn unpaid() -> ServiceError {
    ServiceError::new(
        ErrorKind::PaymentRequired,
        codes::PAYMENT_REQUIRED,
        "the checkout needs an authorized payment of its total: \
         POST /checkout/{sessionId}/payment, then confirm",
    )
}

fn stale() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        codes::CHECKOUT_REPRICED,
        "the total changed since the payment was authorized; pay the new total, then confirm",
    )
}
