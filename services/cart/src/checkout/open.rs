//! Opening a checkout session: the cart repriced, its lines counted
//! against what the shopper and the client network may hold
//! (`hold_limits`), the session recorded and listed for the sweep before
//! anything is held, made its cart's current one, then the hold.

use std::time::Duration;
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::{Cart, CartState, CheckoutSession, CheckoutStatus};
use storefront_proto::common::v1::PostalAddress;

use super::machine::Event;
use super::runner::{Next, Seen};
use super::{Checkout, conflict, current_key, ids};
use crate::carts::{now, version};
use crate::hold_ledgers::{Asked, HOLD_LIMIT_REACHED, Reservation};
use crate::hold_limits::is_guest;
use crate::holds::{at_millis, insufficient, lines_of, millis, session_key};

impl Checkout {
    pub async fn open(
        &self,
        customer_id: &str,
        cart_id: &str,
        network: &str,
        address: Option<PostalAddress>,
    ) -> Result<CheckoutSession, ServiceError> {
        let cart = self.carts.get(customer_id, cart_id).await?;
        if cart.state == CartState::Ordered as i32 {
            return Err(conflict(
                codes::CART_ORDERED,
                "this cart was already ordered",
            ));
        }
        if cart.line_items.is_empty() {
            let message = "the cart is empty";
            return Err(
                ServiceError::new(ErrorKind::Validation, codes::VALIDATION_ERROR, message)
                    .with_violation(FieldViolation::new("cartId", codes::INVALID_VALUE, message)),
            );
        }
        // The session shows what the order would cost now.
        let (cart, _) = self.carts.refreshed(customer_id, cart).await?;
        // What the order would come to now in its market: the cheapest
        // shipping to the address, the tax; refused before anything is held.
        let quote = self.quote(&cart, address.as_ref(), None).await?;
        let created = now();
        let session_id = uuid::Uuid::new_v4().to_string();
        let held = lines_of(&cart);
        let ttl = self.ttl_for(customer_id);
        let now_ms = millis(&created);
        let asked = Asked {
            customer_id,
            network,
            session_id: &session_id,
            cart_id,
            lines: &held,
            line_ids: line_ids(&cart),
        };
        // The one extension's worth past the first expiry, at most.
        let fresh_until = now_ms + 2 * ttl.as_millis() as i64;
        let reserved = self
            .holds
            .ledgers
            .reserve(&asked, now_ms, fresh_until, false)
            .await?;
        let (hold_until_ms, awaiting_payment) = match reserved {
            Reservation::Held(until) => (until, false),
            // Holds nothing yet: its hold is counted once it is paid.
            Reservation::AwaitingPayment => (fresh_until, true),
        };
        let expires = at_millis((now_ms + ttl.as_millis() as i64).min(hold_until_ms));
        let mut session = CheckoutSession {
            id: session_id,
            cart_id: cart_id.to_string(),
            status: CheckoutStatus::Open as i32,
            expires_at: Some(expires),
            created_at: Some(created),
            shipping_address: address,
            awaiting_payment,
            ..Default::default()
        };
        quote.price(&mut session, &cart);
        let mut record = CheckoutRecord {
            session: Some(session.clone()),
            customer_id: customer_id.to_string(),
            cart_version: version(&cart),
            planned_order_id: uuid::Uuid::new_v4().to_string(),
            held,
            client_network: network.to_string(),
            hold_until_ms,
            ..Default::default()
        };
        record.set_hold(HoldState::Pending);
        let inserted = self
            .store
            .insert_message(&session_key(&session.id), &record, Some(self.keep()))
            .await;
        if let Err(e) = inserted {
            self.holds.ledgers.forget(&record).await;
            return Err(e.into());
        }
        // Listed for the sweep before anything is held: a hold is never
        // left behind by a process that stops half-way. Made its cart's
        // current session at the same time: neither waits on the other
        // (the sweep takes a session only once it is due).
        let listed = self.holds.due_at(&session.id, millis(&expires));
        let current = self.make_current(cart_id, &session.id);
        let (listed, current) = tokio::join!(listed, current);
        listed?;
        current?;
        if !awaiting_payment {
            self.hold(&cart, record).await?;
        }
        Ok(session)
    }

    /// Releases what each cart of `owner` holds in an open checkout (its
    /// session then shows EXPIRED).
    pub async fn release_all_of(&self, owner: &str) -> Result<(), ServiceError> {
        for cart_id in self.carts.owned_ids(owner).await? {
            if let Some(current) = self.store.get(&current_key(&cart_id)).await? {
                let session_id = String::from_utf8_lossy(&current.value).into_owned();
                self.drive(&session_id, Event::Release, None, None).await?;
            }
        }
        Ok(())
    }

    /// How long a session of `customer_id`'s stays open: a guest's
    /// shorter (`CHECKOUT_TTL_GUEST_SECS`).
    pub(crate) fn ttl_for(&self, customer_id: &str) -> Duration {
        if is_guest(customer_id) {
            self.guest_ttl
        } else {
            self.ttl
        }
    }

    /// A session that awaited its payment, now paid: counted in its
    /// holders' ledgers against the paid limits, then held. Past those
    /// limits or short of stock it is released (its payment voided with
    /// it), and the shopper told why. The catalog out of reach leaves it
    /// as it was: the payment's next read holds it, or the sweep ends it.
    pub(super) async fn hold_paid(&self, record: &CheckoutRecord) -> Result<Next, ServiceError> {
        let (session_id, cart_id) = ids(record);
        let cart = self.carts.get(&record.customer_id, cart_id).await?;
        let asked = Asked {
            customer_id: &record.customer_id,
            network: &record.client_network,
            session_id,
            cart_id,
            lines: &record.held,
            line_ids: line_ids(&cart),
        };
        let now_ms = millis(&now());
        let ledgers = &self.holds.ledgers;
        match ledgers
            .reserve(&asked, now_ms, record.hold_until_ms, true)
            .await
        {
            Ok(_) => {}
            Err(e) if e.code == HOLD_LIMIT_REACHED => {
                return Ok(Next::Then(Event::Release, Some(e)));
            }
            Err(e) => return Err(e),
        }
        let shortages = self.holds.hold(session_id, record.held.clone()).await?;
        if !shortages.is_empty() {
            let short = insufficient(&cart, &shortages);
            return Ok(Next::Then(Event::Release, Some(short)));
        }
        Ok(Next::Then(Event::Held, None))
    }

    /// Holds the lines of the session just recorded (`record`, at version
    /// 1): the session's 409 naming each line short when the catalog has
    /// too few.
    async fn hold(&self, cart: &Cart, record: CheckoutRecord) -> Result<(), ServiceError> {
        let session_id = &ids(&record).0.to_string();
        let shortages = match self.holds.hold(session_id, record.held.clone()).await {
            Ok(shortages) => shortages,
            Err(e) => {
                self.release_or_leave(session_id).await;
                return Err(e);
            }
        };
        if !shortages.is_empty() {
            self.release_or_leave(session_id).await;
            return Err(insufficient(cart, &shortages));
        }
        // Released meanwhile (a newer checkout of the cart replaced this
        // one, as it may while this one opens): the session stands, shown
        // superseded, as it would had it been replaced a moment later.
        let seen = Seen::at(record, 1);
        self.drive(session_id, Event::Held, Some(seen), None)
            .await?;
        Ok(())
    }
}

/// The cart's lines' ids by SKU, to name the lines past a hold limit.
fn line_ids(cart: &Cart) -> Vec<(String, String)> {
    cart.line_items
        .iter()
        .map(|l| (l.id.clone(), l.sku.clone()))
        .collect()
}
