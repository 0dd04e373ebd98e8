//! Checkout sessions and their confirmation, which creates exactly one
//! order however many times and however concurrently it is called, and a
//! cart at most one order however many sessions it has: the order id is
//! fixed when the session opens, the cart is claimed for it (ACTIVE ->
//! ORDERED by compare-and-set) before the order is created, the orders
//! service creates an id once, and the session flips OPEN -> CONFIRMED by
//! compare-and-set.
//!
//! A cart has at most one OPEN session: opening another supersedes the
//! previous one (it shows EXPIRED and its confirm is 409
//! `CHECKOUT_SUPERSEDED`). Only that one is kept: the session it had
//! replaced is dropped then, so however often a shopper (or a script)
//! opens a checkout, a cart holds at most two session records. The cart is repriced at open (the session shows
//! the fresh total) and again at confirm, where any change is no order and
//! an answer carrying the repriced cart (the gateway's 409 `CART_REPRICED`).

use std::time::Duration;

use storefront_platform::client::call::{Caller, Current};
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::{Store, Updated};
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CartState, CheckoutSession, CheckoutStatus, Repriced};
use storefront_proto::orders::v1::{CreateOrderRequest, Totals};

use crate::carts::{Carts, now};
use crate::clients::Orders;
use crate::pricing::{included_tax, money};

const MAX_ATTEMPTS: usize = 128;

use crate::holds::{Holds, change_session, session_key};

/// The cart's current session: the one that may be confirmed.
pub(crate) fn current_key(cart_id: &str) -> String {
    format!("checkout-of-cart:{cart_id}")
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::not_found("checkout session", id)
}

pub(crate) fn conflict(code: &'static str, message: &str) -> ServiceError {
    ServiceError::new(ErrorKind::Conflict, code, message)
}

fn superseded() -> ServiceError {
    conflict(
        "CHECKOUT_SUPERSEDED",
        "a newer checkout of this cart replaced this session; confirm that one",
    )
}

/// A cart whose prices or codes changed since the session opened: no
/// order, the cart as it now is, and the new total in words (the gateway
/// answers 409 `CART_REPRICED` with both).
fn repriced(cart: Cart) -> Repriced {
    let cents = cart.total_price.as_ref().map_or(0, |m| m.cent_amount);
    let message = format!(
        "prices or discount codes changed since checkout began; the cart total is now {}.{:02} {}; \
         review the cart and check out again",
        cents / 100,
        cents % 100,
        cart.currency_code
    );
    Repriced {
        cart: Some(cart),
        message,
    }
}

pub struct Checkout {
    pub store: Store,
    pub orders: Caller,
    pub holds: Holds,
    /// `CHECKOUT_TTL_SECS`; a guest's `CHECKOUT_TTL_GUEST_SECS`.
    pub ttl: Duration,
    pub guest_ttl: Duration,
}

/// The session as a client sees it now: an open session past its time is
/// EXPIRED. Compared to the nanosecond: by whole seconds, a session could
/// end up to a second before its `expiresAt`.
pub(crate) fn view(record: CheckoutRecord) -> CheckoutSession {
    let mut session = record.session.clone().unwrap_or_default();
    let now = now();
    let expired = session
        .expires_at
        .is_some_and(|t| (t.seconds, t.nanos) <= (now.seconds, now.nanos));
    let superseded = !record.superseded_by.is_empty() || record.hold() == HoldState::Released;
    if session.status == CheckoutStatus::Open as i32 && (expired || superseded) {
        session.status = CheckoutStatus::Expired as i32;
    }
    session
}

impl Checkout {
    /// Releases what a session holds, or leaves it to the sweep.
    pub(crate) async fn release_or_leave(&self, session_id: &str) {
        if let Err(e) = self.holds.release(session_id).await {
            tracing::warn!(error = %e, session_id, "checkout hold left for the sweep");
        }
    }

    /// Kept a day past expiry so a late confirm retry still finds its answer.
    pub(crate) fn keep(&self) -> Duration {
        self.ttl.max(self.guest_ttl) + Duration::from_secs(86_400)
    }

    /// Makes `session_id` the cart's one OPEN session; the one it replaces
    /// is marked superseded. The pointer moves by compare-and-set, so of
    /// concurrent opens exactly one ends current.
    pub(crate) async fn make_current(
        &self,
        cart_id: &str,
        session_id: &str,
    ) -> Result<(), ServiceError> {
        let key = current_key(cart_id);
        for _ in 0..MAX_ATTEMPTS {
            let previous = match self.store.get(&key).await? {
                None => {
                    if self
                        .store
                        .insert(&key, session_id.as_bytes(), Some(self.keep()))
                        .await?
                    {
                        return Ok(());
                    }
                    continue;
                }
                Some(found) => found,
            };
            let moved = self
                .store
                .replace(
                    &key,
                    previous.version,
                    session_id.as_bytes(),
                    Some(self.keep()),
                )
                .await?;
            if moved.is_some() {
                let replaced = String::from_utf8_lossy(&previous.value).into_owned();
                self.supersede(&replaced, session_id).await?;
                return Ok(());
            }
        }
        Err(conflict(
            "CONCURRENT_MODIFICATION",
            "the cart is busy; retry",
        ))
    }

    /// A superseded session is kept an hour, to answer its late confirms;
    /// the one it had superseded is dropped now, and the new session
    /// remembers this one, to drop it in turn.
    async fn supersede(&self, session_id: &str, by: &str) -> Result<(), ServiceError> {
        let updated = self
            .store
            .update_message(
                &session_key(session_id),
                MAX_ATTEMPTS,
                Some(Duration::from_secs(3600).min(self.keep())),
                |record: &mut CheckoutRecord| {
                    record.superseded_by = by.to_string();
                    Ok::<_, ServiceError>(std::mem::take(&mut record.supersedes))
                },
            )
            .await?;
        self.release_or_leave(session_id).await;
        if let Updated::Done { result: older, .. } = updated
            && !older.is_empty()
            && older != by
        {
            self.release_or_leave(&older).await;
            self.store.delete(&session_key(&older)).await?;
        }
        self.store
            .update_message(
                &session_key(by),
                MAX_ATTEMPTS,
                None,
                |record: &mut CheckoutRecord| {
                    record.supersedes = session_id.to_string();
                    Ok::<_, ServiceError>(())
                },
            )
            .await?;
        Ok(())
    }

    /// 409 unless `record` is its cart's current session.
    async fn ensure_current(&self, record: &CheckoutRecord) -> Result<(), ServiceError> {
        let session = record.session.as_ref();
        let (id, cart_id) = session.map_or(("", ""), |s| (s.id.as_str(), s.cart_id.as_str()));
        let current = self.store.get(&current_key(cart_id)).await?;
        let replaced =
            !record.superseded_by.is_empty() || current.is_some_and(|c| c.value != id.as_bytes());
        if replaced {
            return Err(superseded());
        }
        Ok(())
    }

    async fn record(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutRecord, ServiceError> {
        let found = self
            .store
            .get_message::<CheckoutRecord>(&session_key(session_id))
            .await?;
        found
            .map(|f| f.value)
            .filter(|r| r.customer_id == customer_id)
            .ok_or_else(|| not_found(session_id))
    }

    pub async fn get(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        Ok(view(self.record(customer_id, session_id).await?))
    }

    pub async fn confirm(
        &self,
        carts: &Carts,
        customer_id: &str,
        session_id: &str,
    ) -> Result<Outcome, ServiceError> {
        let record = self.record(customer_id, session_id).await?;
        let session = view(record.clone());
        match CheckoutStatus::try_from(session.status) {
            Ok(CheckoutStatus::Confirmed) => return Ok(Outcome::Confirmed(session)),
            Ok(CheckoutStatus::Expired) if !record.superseded_by.is_empty() => {
                return Err(superseded());
            }
            Ok(CheckoutStatus::Expired) => {
                return Err(conflict(
                    "CHECKOUT_EXPIRED",
                    "the checkout session has expired",
                ));
            }
            _ => {}
        }
        let cart = carts.get(customer_id, &session.cart_id).await?;
        let ours =
            cart.state == CartState::Ordered as i32 && cart.order_id == record.planned_order_id;
        if !ours {
            self.ensure_current(&record).await?;
            let (cart, changed) = carts.refresh(customer_id, &session.cart_id).await?;
            if changed {
                return Ok(Outcome::Repriced(repriced(cart)));
            }
            if let Some(settled) = self.sell_and_claim(carts, customer_id, &record).await? {
                return Ok(settled);
            }
        }
        self.create_order(&record, &cart).await?;
        self.holds.sell(session_id).await?;
        let confirmed = self
            .mark_confirmed(session_id, &record.planned_order_id)
            .await?;
        tracing::info!(session_id, order_id = %record.planned_order_id, "checkout confirmed");
        Ok(Outcome::Confirmed(confirmed))
    }

    /// Moves the session's hold to SELLING, then claims the cart for its
    /// order (any other session of the cart is refused from then on). A
    /// concurrent confirmation of this session may have got further
    /// meanwhile (sold the hold, claimed the cart): its outcome is this
    /// one's (`Some`), or this one goes on as its retry (`None`, as when
    /// both steps succeed).
    async fn sell_and_claim(
        &self,
        carts: &Carts,
        customer_id: &str,
        record: &CheckoutRecord,
    ) -> Result<Option<Outcome>, ServiceError> {
        let (session_id, cart_id) = record
            .session
            .as_ref()
            .map_or(("", ""), |s| (s.id.as_str(), s.cart_id.as_str()));
        let (failed, selling) = match self.start_selling(record).await {
            Err(e) => (e, false),
            Ok(()) => {
                let version = record.cart_version;
                match carts
                    .claim(customer_id, cart_id, version, &record.planned_order_id)
                    .await
                {
                    Ok(_) => return Ok(None),
                    Err(e) => (e, true),
                }
            }
        };
        let again = view(self.record(customer_id, session_id).await?);
        if again.status == CheckoutStatus::Confirmed as i32 {
            return Ok(Some(Outcome::Confirmed(again)));
        }
        let now = carts.get(customer_id, cart_id).await?;
        if now.state == CartState::Ordered as i32 && now.order_id == record.planned_order_id {
            return Ok(None);
        }
        // Lost: the hold this confirm moved goes back (never one it did not).
        if selling {
            self.stop_selling(&now, record).await;
        }
        Err(failed)
    }

    /// Marks the session's hold as being sold, so that no release (expiry,
    /// a newer session) takes the units from under the order. Sessions
    /// stored before holds existed hold nothing.
    async fn start_selling(&self, record: &CheckoutRecord) -> Result<(), ServiceError> {
        if record.hold() == HoldState::Unspecified {
            return Ok(());
        }
        let id = record.session.as_ref().map_or("", |s| s.id.as_str());
        let from = [HoldState::Held, HoldState::Selling];
        if self
            .holds
            .transition(id, &from, HoldState::Selling)
            .await?
            .is_some()
        {
            return Ok(());
        }
        Err(conflict(
            "CHECKOUT_EXPIRED",
            "the stock this checkout held was released; check out again",
        ))
    }

    /// A confirm that could not claim the cart (`cart` as it now is, not
    /// this session's order): the hold goes back to HELD, or is released
    /// when another order took the cart.
    async fn stop_selling(&self, cart: &Cart, record: &CheckoutRecord) {
        let Some(session) = record.session.as_ref() else {
            return;
        };
        let taken = cart.state == CartState::Ordered as i32;
        let to = if taken {
            HoldState::Released
        } else {
            HoldState::Held
        };
        let moved = self
            .holds
            .transition(&session.id, &[HoldState::Selling], to)
            .await;
        if taken && matches!(moved, Ok(Some(_))) {
            self.release_or_leave(&session.id).await;
        }
    }

    async fn create_order(&self, record: &CheckoutRecord, cart: &Cart) -> Result<(), ServiceError> {
        let currency = cart.currency_code.as_str();
        let cents = |m: &Option<storefront_proto::common::v1::Money>| {
            m.as_ref().map_or(0, |m| m.cent_amount)
        };
        let total = cents(&cart.total_price);
        let totals = Totals {
            subtotal: cart.subtotal.clone(),
            discount: cart.discount_total.clone(),
            shipping: Some(money(currency, 0)),
            tax: Some(money(currency, included_tax(currency, total))),
            total: cart.total_price.clone(),
        };
        let message = CreateOrderRequest {
            order_id: record.planned_order_id.clone(),
            customer_id: record.customer_id.clone(),
            cart_id: cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
            line_items: cart.line_items.clone(),
            totals: Some(totals),
            shipping_address: record
                .session
                .as_ref()
                .and_then(|s| s.shipping_address.clone()),
            discount_codes: cart.discount_codes.clone(),
        };
        let unavailable =
            |m: String| ServiceError::new(ErrorKind::Unavailable, "ORDERS_UNAVAILABLE", m);
        Orders(&self.orders)
            .create_order(&Current, message)
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        Ok(())
    }

    async fn mark_confirmed(
        &self,
        session_id: &str,
        order_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let updated = change_session(&self.store, session_id, |record| {
            if record.hold() == HoldState::Selling {
                record.set_hold(HoldState::Sold);
            }
            if let Some(session) = record.session.as_mut()
                && session.status != CheckoutStatus::Confirmed as i32
            {
                session.status = CheckoutStatus::Confirmed as i32;
                session.order_id = order_id.to_string();
            }
            Ok::<_, ServiceError>(())
        })
        .await?;
        match updated {
            Updated::Done { value, .. } => Ok(view(value)),
            Updated::Missing => Err(not_found(session_id)),
            Updated::Contended => Err(conflict(
                "CONCURRENT_MODIFICATION",
                "the session is busy; retry",
            )),
        }
    }
}

#[cfg(test)]
#[path = "checkout_states.rs"]
mod states;

#[cfg(test)]
mod tests {
    use storefront_proto::Timestamp;

    use super::*;

    fn open_until(expires_at: Timestamp) -> CheckoutRecord {
        CheckoutRecord {
            session: Some(CheckoutSession {
                status: CheckoutStatus::Open as i32,
                expires_at: Some(expires_at),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// A session lasts until its `expiresAt`, not until the second it
    /// falls in begins.
    #[test]
    fn a_session_is_open_until_its_expiry_to_the_nanosecond() {
        let now = now();
        let later_this_second = Timestamp {
            seconds: now.seconds,
            nanos: 999_999_999,
        };
        let status = view(open_until(later_this_second)).status;
        assert_eq!(status, CheckoutStatus::Open as i32);
        let passed = Timestamp {
            seconds: now.seconds - 1,
            nanos: now.nanos,
        };
        assert_eq!(
            view(open_until(passed)).status,
            CheckoutStatus::Expired as i32
        );
    }
}
