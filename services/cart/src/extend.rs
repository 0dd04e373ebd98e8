//! `POST /checkout/{id}/extend`: once per session, its time (and its
//! hold's) runs again from now, never past the first expiry of its cart's
//! sessions plus one checkout time (`hold_until_ms`). Past its expiry,
//! superseded, released or confirmed, a session is not extended.

use std::time::Duration;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::Updated;
use storefront_proto::Timestamp;
use storefront_proto::cart::storage::v1::HoldState;
use storefront_proto::cart::v1::{CheckoutSession, CheckoutStatus};

use crate::checkout::{Checkout, view};
use crate::holds::{at_millis, change_session, millis};

fn refused(code: &'static str, message: &str) -> ServiceError {
    ServiceError::new(ErrorKind::Conflict, code, message)
}

impl Checkout {
    pub async fn extend(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let ttl = self.ttl_for(customer_id);
        let updated = change_session(&self.store, session_id, |record| {
            if record.customer_id != customer_id {
                return Err(ServiceError::not_found("checkout session", session_id));
            }
            let status = view(record.clone()).status;
            if status == CheckoutStatus::Confirmed as i32 {
                return Err(refused("CHECKOUT_CONFIRMED", "the checkout is confirmed"));
            }
            if status != CheckoutStatus::Open as i32 {
                return Err(refused(
                    "CHECKOUT_EXPIRED",
                    "the checkout session has expired",
                ));
            }
            if record.extended {
                let message = "a checkout is extended once; check out again";
                return Err(refused("CHECKOUT_ALREADY_EXTENDED", message));
            }
            let mut until = later(ttl);
            // Never past the first expiry of the cart's sessions plus one
            // extension, whatever was checked out again since.
            if record.hold_until_ms > 0 && millis(&until) > record.hold_until_ms {
                until = at_millis(record.hold_until_ms);
            }
            let current = record.session.as_ref().and_then(|s| s.expires_at);
            if current.is_some_and(|c| millis(&c) >= millis(&until)) {
                let message = "this checkout already holds its stock as long as it may \
                     (its cart's first checkout time plus one extension)";
                return Err(refused("CHECKOUT_ALREADY_EXTENDED", message));
            }
            record.extended = true;
            if let Some(session) = record.session.as_mut() {
                session.expires_at = Some(until);
            }
            Ok(until)
        })
        .await?;
        let (record, until) = match updated {
            Updated::Done { value, result, .. } => (value, result),
            Updated::Missing => {
                return Err(ServiceError::not_found("checkout session", session_id));
            }
            Updated::Contended => {
                return Err(refused(
                    "CONCURRENT_MODIFICATION",
                    "the checkout is busy; retry",
                ));
            }
        };
        if record.hold() != HoldState::Unspecified {
            self.holds.due_at(session_id, &until).await?;
        }
        Ok(view(record))
    }
}

fn later(ttl: Duration) -> Timestamp {
    let now = crate::carts::now();
    Timestamp {
        seconds: now.seconds + ttl.as_secs() as i64,
        nanos: now.nanos,
    }
}
