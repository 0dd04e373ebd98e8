//! `POST /checkout/{id}/confirm`: the cart read once, repriced unless a
//! confirm that stopped already claimed it, then the machine's Confirm
//! (claim the cart, create the order, sell the hold).

use storefront_platform::error::ServiceError;
use storefront_platform::store::Versioned;
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CheckoutSession, Repriced};

use super::machine::{Event, Refusal, confirm_refused, is_confirmed};
use super::paid::{for_total, holds_money};
use super::runner::{Ran, Seen};
use super::{Checkout, current_key, ids, view};
use crate::carts::now;
use crate::claims::claimed_for;
use crate::quote::{decimal, same_price};

/// A cart whose prices or codes changed since the session opened: no
/// order, the cart as it now is, and the new total in words (the gateway
/// answers 409 `CART_REPRICED` with both).
fn repriced(cart: Cart, minor_units: u32) -> Repriced {
    let cents = cart.total_price.as_ref().map_or(0, |m| m.cent_amount);
    let message = format!(
        "prices or discount codes changed since checkout began; the cart total is now {} {}; \
         review the cart and check out again",
        decimal(cents, minor_units),
        cart.currency_code
    );
    Repriced {
        cart: Some(cart),
        message,
        session: None,
    }
}

/// The cart stands but the session's shipping or tax changed (the markets
/// changed since it opened): no order, the session as repriced, still open
/// (the gateway's 409 `CHECKOUT_REPRICED`).
fn session_repriced(cart: Cart, session: CheckoutSession, minor_units: u32) -> Repriced {
    let total = session.total_price.as_ref().map_or(0, |m| m.cent_amount);
    let message = format!(
        "shipping or tax changed since checkout began; the total is now {} {}; \
         review the checkout and confirm again",
        decimal(total, minor_units),
        cart.currency_code
    );
    Repriced {
        cart: Some(cart),
        message,
        session: Some(session),
    }
}

impl Checkout {
    /// Confirms the session, or answers the outcome of its confirm running
    /// in this process now (`in_flight`).
    pub async fn confirm(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<Outcome, ServiceError> {
        self.confirm_from(customer_id, session_id, None).await
    }

    /// As `confirm`, from the session's record as the caller has just read
    /// or written it (`seen`, the customer's): not read again.
    pub(crate) async fn confirm_from(
        &self,
        customer_id: &str,
        session_id: &str,
        seen: Option<Seen>,
    ) -> Result<Outcome, ServiceError> {
        let key = (customer_id.to_string(), session_id.to_string());
        let confirm = || self.confirm_now(customer_id, session_id, seen);
        self.confirms.run(key, confirm).await
    }

    async fn confirm_now(
        &self,
        customer_id: &str,
        session_id: &str,
        seen: Option<Seen>,
    ) -> Result<Outcome, ServiceError> {
        let seen = match seen {
            Some(seen) => seen,
            None => self.record(customer_id, session_id).await?.into(),
        };
        if is_confirmed(&seen.record) {
            return Ok(Outcome::Confirmed(view(seen.record)));
        }
        let (_, cart_id) = ids(&seen.record);
        // The cart's pointer to its current session is read with the cart
        // (one round trip for both), though a claimed cart needs it not.
        let pointer = current_key(cart_id);
        let cart = self.carts.get_versioned(customer_id, cart_id);
        let (cart, current) = tokio::join!(cart, self.store.get(&pointer));
        let cart = cart?;
        let claimed = claimed_for(&cart.value, &seen.record.planned_order_id);
        let seen = if claimed {
            seen
        } else {
            self.refresh_payment(seen).await?
        };
        let cart = if claimed {
            cart
        } else {
            let record = &seen.record;
            // Refused before the catalog is asked for prices.
            match confirm_refused(record, claimed, &now()) {
                // Rare, and boxed so that its future is not in every confirm's.
                Err(Refusal::PaymentStale) => {
                    return Box::pin(self.unpay(seen.record, cart.value)).await;
                }
                refused => refused.map_err(Refusal::error)?,
            }
            Self::ensure_current(record, current?)?;
            let version = cart.version;
            let (cart, changed) = self.carts.refreshed(customer_id, cart.value).await?;
            let minor_units = self.markets.current().minor_units(&cart.currency_code);
            if changed {
                return Ok(Outcome::Repriced(repriced(cart, minor_units)));
            }
            if let Some(session) = self.reprice_if_stale(record, &cart).await? {
                let session = Box::pin(self.void_stale(session_id, session)).await?;
                return Ok(Outcome::Repriced(session_repriced(
                    cart,
                    session,
                    minor_units,
                )));
            }
            // Unchanged by the refresh: as read, at its version.
            Versioned {
                version,
                value: cart,
            }
        };
        let confirm = Event::Confirm { claimed };
        match self
            .drive(session_id, confirm, Some(seen), Some(&cart))
            .await?
        {
            Ran::Done(Seen { record, .. }) | Ran::Refused(record, Refusal::Confirmed) => {
                let order_id = &record.planned_order_id;
                tracing::info!(session_id, %order_id, "checkout confirmed");
                Ok(Outcome::Confirmed(view(record)))
            }
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }

    /// A payment authorized for another total than the session's now:
    /// voided, and the session answered as it stands (409
    /// `CHECKOUT_REPRICED`), to be paid again.
    async fn unpay(&self, record: CheckoutRecord, cart: Cart) -> Result<Outcome, ServiceError> {
        let (id, _) = ids(&record);
        let id = id.to_string();
        let session = self.void_stale(&id, view(record)).await?;
        let minor_units = self.markets.current().minor_units(&cart.currency_code);
        let mut repriced = session_repriced(cart, session, minor_units);
        repriced.message = format!(
            "{} (the payment was authorized for another total and was voided: pay again)",
            repriced.message
        );
        Ok(Outcome::Repriced(repriced))
    }

    /// `session` with its payment voided and recorded when it holds money
    /// for another total than the session's.
    async fn void_stale(
        &self,
        session_id: &str,
        session: CheckoutSession,
    ) -> Result<CheckoutSession, ServiceError> {
        let found = self.store_record(session_id).await?;
        let record = &found.value;
        let payment = record.session.as_ref().and_then(|s| s.payment.clone());
        let Some(payment) = payment.filter(|p| holds_money(p) && !for_total(record, p)) else {
            return Ok(session);
        };
        let voided = self.void_payment(record, &payment).await?;
        let event = Event::Paid {
            payment: &voided,
            declined: false,
            replaces: false,
        };
        match self
            .drive(session_id, event, Some(found.into()), None)
            .await?
        {
            Ran::Done(Seen { record, .. }) | Ran::Refused(record, _) => Ok(view(record)),
        }
    }

    /// The session priced for `cart` in its market as it is now, kept as
    /// the session's price, when that differs from what the session shows
    /// (its method no longer offered: the cheapest; the market's tax or
    /// shipping changed). An order is never made at a price the shopper
    /// was not shown.
    async fn reprice_if_stale(
        &self,
        record: &CheckoutRecord,
        cart: &Cart,
    ) -> Result<Option<CheckoutSession>, ServiceError> {
        // A cart changed since open is the claim's to refuse (CART_CHANGED).
        if crate::carts::version(cart) != record.cart_version {
            return Ok(None);
        }
        let shown = record.session.clone().unwrap_or_default();
        let address = shown.shipping_address.as_ref();
        let method = Some(shown.shipping_method_id.as_str());
        let quote = match self.quote(cart, address, method).await {
            Ok(quote) => quote,
            Err(_) => self.quote(cart, address, None).await?,
        };
        let mut priced = shown.clone();
        quote.price(&mut priced, cart);
        if same_price(&shown, &priced) {
            return Ok(None);
        }
        let (id, _) = ids(record);
        let reprice = Event::Reprice { priced: &priced };
        let seen = Seen::from(record.clone());
        match self.drive(id, reprice, Some(seen), None).await? {
            Ran::Done(seen) => Ok(Some(view(seen.record))),
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }
}
