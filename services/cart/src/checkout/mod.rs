//! Checkout sessions and their confirmation, which creates exactly one
//! order however many times and however concurrently it is called, and a
//! cart at most one order however many sessions it has: the order id is
//! fixed when the session opens, the cart is claimed for it (ACTIVE ->
//! ORDERED by compare-and-set) before the order is created, the orders
//! service creates an id once, and the session flips OPEN -> CONFIRMED by
//! compare-and-set. Every change of a session's state is a step of one
//! machine (`machine`), applied and carried out by one runner (`runner`).
//!
//! A cart has at most one OPEN session: opening another supersedes the
//! previous one (it shows EXPIRED and its confirm is 409
//! `CHECKOUT_SUPERSEDED`). Only that one is kept: the session it had
//! replaced is dropped then, so however often a shopper (or a script)
//! opens a checkout, a cart holds at most two session records. The cart is
//! repriced at open (the session shows the fresh total) and again at
//! confirm, where any change is no order and an answer carrying the
//! repriced cart (the gateway's 409 `CART_REPRICED`).

mod confirm;
mod extend;
mod in_flight;
pub mod machine;
mod open;
mod paid;
mod pay;
mod payment_event;
mod refusal;
mod release;
mod runner;
mod stepped;
mod sweep;
mod update;

use std::sync::Arc;
use std::time::Duration;

use storefront_platform::error::ServiceError;
use storefront_platform::store::{Store, Versioned};
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CheckoutSession};
use storefront_proto::common::v1::PostalAddress;

use crate::quote::Quote;

use crate::carts::{Carts, now};
use crate::clients::{OrdersPeer, PaymentsPeer};
use crate::holds::{Holds, session_key};
use machine::{Event, Refusal, codes};

const MAX_ATTEMPTS: usize = 128;

/// The cart's current session: the one that may be confirmed.
pub(crate) fn current_key(cart_id: &str) -> String {
    format!("checkout-of-cart:{cart_id}")
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::not_found("checkout session", id)
}

pub(crate) fn conflict(code: &'static str, message: &str) -> ServiceError {
    ServiceError::new(
        storefront_platform::error::ErrorKind::Conflict,
        code,
        message,
    )
}

pub struct Checkout {
    pub store: Store,
    pub carts: Arc<Carts>,
    pub orders: Arc<dyn OrdersPeer>,
    pub payments: Arc<dyn PaymentsPeer>,
    pub holds: Holds,
    /// The shop's markets: an order's tax.
    pub markets: crate::market_set::Markets,
    /// `CHECKOUT_TTL_SECS`; a guest's `CHECKOUT_TTL_GUEST_SECS`.
    pub ttl: Duration,
    pub guest_ttl: Duration,
    /// The confirms running in this process, by customer and session.
    pub(crate) confirms: in_flight::InFlight<Outcome>,
}

/// The session as a client sees it now (an open session past its time,
/// replaced or released is EXPIRED).
pub(crate) fn view(record: CheckoutRecord) -> CheckoutSession {
    let status = machine::shown_status(&record, &now());
    let mut session = record.session.unwrap_or_default();
    session.status = status as i32;
    session
}

fn ids(record: &CheckoutRecord) -> (&str, &str) {
    record
        .session
        .as_ref()
        .map_or(("", ""), |s| (s.id.as_str(), s.cart_id.as_str()))
}

impl Checkout {
    /// Releases what a session holds, or leaves it to the sweep.
    pub(crate) async fn release_or_leave(&self, session_id: &str) {
        if let Err(e) = self.drive(session_id, Event::Release, None, None).await {
            tracing::warn!(error = %e, session_id, "checkout hold left for the sweep");
        }
    }

    /// What `cart` comes to at `address` by `method` (the cheapest when
    /// none) in the markets as they are now: the category keys are asked
    /// of the catalog only while some market taxes by category.
    pub(crate) async fn quote(
        &self,
        cart: &Cart,
        address: Option<&PostalAddress>,
        method: Option<&str>,
    ) -> Result<Quote, ServiceError> {
        let loaded = self.markets.current();
        let keys = self.carts.keys_for(&loaded).await?;
        loaded.quote(cart, address, method, &keys)
    }

    /// As `quote`, for a session's order (`Loaded::quote_of`).
    pub(crate) async fn quote_of(
        &self,
        record: &CheckoutRecord,
        cart: &Cart,
    ) -> Result<Quote, ServiceError> {
        let loaded = self.markets.current();
        let keys = self.carts.keys_for(&loaded).await?;
        Ok(loaded.quote_of(record, cart, &keys))
    }

    /// Kept a day past expiry so a late confirm retry still finds its answer.
    pub(crate) fn keep(&self) -> Duration {
        self.ttl.max(self.guest_ttl) + Duration::from_secs(86_400)
    }

    /// Makes `session_id` the cart's one OPEN session; the one it replaces
    /// is superseded. The pointer moves by compare-and-set, so of
    /// concurrent opens exactly one ends current. Inserted first: a cart's
    /// first checkout (the common case) costs one round trip, a reopen
    /// one more than a read first would.
    pub(crate) async fn make_current(
        &self,
        cart_id: &str,
        session_id: &str,
    ) -> Result<(), ServiceError> {
        let key = current_key(cart_id);
        let value = session_id.as_bytes();
        let ttl = Some(self.keep());
        for _ in 0..MAX_ATTEMPTS {
            if self.store.insert(&key, value, ttl).await? {
                return Ok(());
            }
            // Gone again since the insert found it: insert once more.
            let Some(previous) = self.store.get(&key).await? else {
                continue;
            };
            let moved = self
                .store
                .replace(&key, previous.version, value, ttl)
                .await?;
            if moved.is_some() {
                let replaced = String::from_utf8_lossy(&previous.value).into_owned();
                return self.supersede(&replaced, session_id).await;
            }
        }
        Err(conflict(codes::BUSY, "the cart is busy; retry"))
    }

    /// A superseded session is kept an hour, to answer its late confirms;
    /// the one it had superseded is dropped now, and the new session
    /// remembers this one, to drop it in turn.
    async fn supersede(&self, session_id: &str, by: &str) -> Result<(), ServiceError> {
        let superseded = Event::Superseded { by };
        if let Err(e) = self.drive(session_id, superseded, None, None).await {
            tracing::warn!(error = %e, session_id, "superseded checkout left for the sweep");
        }
        let replacing = Event::Replacing {
            previous: session_id,
        };
        self.drive(by, replacing, None, None).await?;
        Ok(())
    }

    /// 409 unless `record` is its cart's current session (`current`, the
    /// cart's pointer as read).
    fn ensure_current(
        record: &CheckoutRecord,
        current: Option<Versioned<Vec<u8>>>,
    ) -> Result<(), ServiceError> {
        let (id, _) = ids(record);
        if current.is_some_and(|c| c.value != id.as_bytes()) {
            return Err(Refusal::Superseded.error());
        }
        Ok(())
    }

    /// The session's record and its version, when it is `customer_id`'s.
    async fn record(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<Versioned<CheckoutRecord>, ServiceError> {
        let found = self.store_record(session_id).await?;
        Some(found)
            .filter(|r| r.value.customer_id == customer_id)
            .ok_or_else(|| not_found(session_id))
    }

    /// The session's record and its version, whoever's it is.
    async fn store_record(
        &self,
        session_id: &str,
    ) -> Result<Versioned<CheckoutRecord>, ServiceError> {
        let found = self
            .store
            .get_message::<CheckoutRecord>(&session_key(session_id))
            .await?;
        found.ok_or_else(|| not_found(session_id))
    }

    pub async fn get(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        Ok(view(self.record(customer_id, session_id).await?.value))
    }
}

#[cfg(test)]
mod confirm_tests;
#[cfg(test)]
mod fakes;
#[cfg(test)]
mod pay_tests;
#[cfg(test)]
mod shipping_tests;
