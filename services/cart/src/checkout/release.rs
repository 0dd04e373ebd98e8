//! An agent's cancel (docs/agents.md): an open session ends unconfirmed
//! and the stock it holds goes back now rather than at its expiry (the
//! machine's Release). A confirmed session is not released; one already
//! expired or released answers as it stands.

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::CheckoutSession;

use super::machine::{Event, Refusal, is_confirmed};
use super::runner::Ran;
use super::{Checkout, current_key, not_found, view};

impl Checkout {
    pub async fn release(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let found = self.record(customer_id, session_id).await?;
        if is_confirmed(&found.value) {
            return Err(Refusal::Confirmed.error());
        }
        match self
            .drive(session_id, Event::Release, Some(found.into()), None)
            .await?
        {
            Ran::Done(seen) => Ok(view(seen.record)),
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }

    /// The cart's current session (the newest opened), the caller's only.
    pub async fn current(
        &self,
        customer_id: &str,
        cart_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let pointer = self.store.get(&current_key(cart_id)).await?;
        let Some(pointer) = pointer else {
            return Err(not_found(cart_id));
        };
        let session_id = String::from_utf8_lossy(&pointer.value);
        self.get(customer_id, &session_id).await
    }
}
