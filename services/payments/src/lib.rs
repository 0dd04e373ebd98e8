//! Taking money at checkout (issue 47), provider by provider, behind one
//! trait: a payment is created for an amount and a currency under an
//! idempotency key, confirmed with a payment method, read, captured,
//! voided and refunded; a provider's webhooks are verified and parsed.
//!
//! This crate is the payments service's domain: the `test` provider (the
//! embedded default, mirroring Stripe's test payment methods so client code
//! is the same) and Stripe's webhook signatures. The gRPC program, the
//! Stripe HTTP provider and the checkout's use of them build on it.

pub mod error;
pub mod idempotency;
pub mod payment;
pub mod provider;
pub mod test_provider;
pub mod webhook;

pub use error::PaymentError;
pub use payment::{Money, NextAction, Payment, PaymentStatus};
pub use provider::PaymentProvider;
