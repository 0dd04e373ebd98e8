//! The one trait every payment provider implements.

use std::future::Future;
use std::pin::Pin;

use crate::error::PaymentError;
use crate::payment::{Money, Payment};
use crate::webhook::Event;

/// A provider's answer to come.
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, PaymentError>> + Send + 'a>>;

/// Creates and moves payments at one provider. Every call that changes a
/// payment takes an idempotency key (`storefront_domain::payment_keys::key`): a retry with the
/// same key changes nothing twice.
pub trait PaymentProvider: Send + Sync {
    /// The provider's name in the API (`test`, `stripe`).
    fn name(&self) -> &'static str;
    /// A payment of `amount` for `reference` (a checkout session),
    /// waiting for a method (or confirmed at once with `method`).
    fn create(
        &self,
        amount: Money,
        reference: &str,
        key: &str,
        method: Option<&str>,
    ) -> Answer<'_, Payment>;
    /// Confirms the payment with `method`: authorized, declined, or in
    /// need of an action.
    fn confirm(&self, id: &str, method: &str, key: &str) -> Answer<'_, Payment>;
    fn get(&self, id: &str) -> Answer<'_, Payment>;
    /// Takes `amount` of what was authorized (all of it when none).
    fn capture(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment>;
    /// Lets the authorization go.
    fn void(&self, id: &str, key: &str) -> Answer<'_, Payment>;
    /// Gives back `amount` of what was captured (all of it when none).
    fn refund(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment>;
    /// The event a webhook delivered, once its signature verifies.
    fn webhook(&self, signature: &str, body: &[u8], now_secs: i64) -> Result<Event, PaymentError>;
}
