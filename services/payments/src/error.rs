//! What a payment provider refuses: the crate's one error type.

/// What a provider refuses, each as the storefront answers it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaymentError {
    /// The method was declined (402 `PAYMENT_DECLINED`); the payment
    /// waits for another.
    #[error("the payment method was declined ({decline_code})")]
    Declined { decline_code: String },
    /// No such payment.
    #[error("no payment {0}")]
    NotFound(String),
    /// Not possible in the payment's state (409): a capture of a voided
    /// payment, a refund beyond what was captured.
    #[error("{0}")]
    State(String),
    /// Bad input (422): an amount below 1, an unknown currency, an
    /// over-long payment method, an idempotency key reused for another
    /// request.
    #[error("{0}")]
    Invalid(String),
    /// The provider is out of reach (503 with Retry-After).
    #[error("the payment provider is unavailable: {0}")]
    Unavailable(String),
    /// A webhook whose signature does not verify or is stale (400).
    #[error("{0}")]
    BadSignature(String),
}
