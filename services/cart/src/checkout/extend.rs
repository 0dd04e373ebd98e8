//! `POST /checkout/{id}/extend`: once per session, its time (and its
//! hold's) runs again from now, never past the first expiry of its cart's
//! sessions plus one checkout time (`hold_until_ms`). Past its expiry,
//! superseded, released or confirmed, a session is not extended (the
//! machine's Extend).

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::CheckoutSession;

use super::machine::Event;
use super::runner::Ran;
use super::{Checkout, view};
use crate::carts::now;
use crate::holds::millis;

impl Checkout {
    pub async fn extend(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let found = self.record(customer_id, session_id).await?;
        let until_ms = millis(&now()) + self.ttl_for(customer_id).as_millis() as i64;
        let extend = Event::Extend { until_ms };
        match self
            .drive(session_id, extend, Some(found.into()), None)
            .await?
        {
            Ran::Done(seen) => Ok(view(seen.record)),
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }
}
