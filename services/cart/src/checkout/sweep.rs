//! The sweep: every replica, every `SWEEP_EVERY`, settles the sessions due
//! on the holds' list (the machine's Due): released at expiry, sold once
//! confirmed, and a confirm that stopped after claiming its cart finished.
//! A session being confirmed is given `SELLING_GRACE` past its expiry
//! first.

use std::sync::Arc;
use std::time::Duration;

use storefront_platform::error::ServiceError;
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use tokio_util::sync::CancellationToken;

use super::machine::Event;
use super::{Checkout, ids};
use crate::claims::claimed_for;
use crate::holds::{millis, session_key};

const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Sessions a sweep settles at most (the rest wait for the next).
const SWEEP_SESSIONS: usize = 200;
/// How long past its expiry a confirm under way is left to finish.
const SELLING_GRACE_MS: i64 = 60_000;

impl Checkout {
    /// Settles the sessions due, every `SWEEP_EVERY`, until shutdown.
    pub async fn sweep(self: Arc<Self>, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(SWEEP_EVERY) => {}
            }
            let now = millis(&crate::carts::now());
            let due = match self.holds.listed(SWEEP_SESSIONS).await {
                Ok(due) => due,
                Err(e) => {
                    tracing::warn!(error = %e, "checkout holds sweep skipped");
                    continue;
                }
            };
            for (session_id, at) in due.into_iter().take_while(|(_, at)| *at <= now) {
                if let Err(e) = self.settle_due(&session_id, now - at).await {
                    tracing::warn!(error = %e, session_id, "checkout hold left for the next sweep");
                }
            }
        }
    }

    /// Settles one session `late_ms` past its time on the list.
    pub(crate) async fn settle_due(
        &self,
        session_id: &str,
        late_ms: i64,
    ) -> Result<(), ServiceError> {
        let key = session_key(session_id);
        let Some(found) = self.store.get_message::<CheckoutRecord>(&key).await? else {
            return self.holds.unlist(session_id).await;
        };
        if found.value.hold() != HoldState::Selling {
            let due = Event::Due { claimed: false };
            self.drive(session_id, due, Some(found.into()), None)
                .await?;
            return Ok(());
        }
        if late_ms < SELLING_GRACE_MS {
            return Ok(());
        }
        let record = &found.value;
        let (_, cart_id) = ids(record);
        let cart = self.carts.get_versioned(&record.customer_id, cart_id);
        let cart = cart.await.ok();
        let claimed = cart
            .as_ref()
            .is_some_and(|c| claimed_for(&c.value, &record.planned_order_id));
        let due = Event::Due { claimed };
        self.drive(session_id, due, Some(found.into()), cart.as_ref())
            .await?;
        Ok(())
    }
}
