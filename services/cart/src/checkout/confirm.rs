//! `POST /checkout/{id}/confirm`: the cart read once, repriced unless a
//! confirm that stopped already claimed it, then the machine's Confirm
//! (claim the cart, create the order, sell the hold).

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, Repriced};

use super::machine::{Event, Refusal, is_confirmed, step};
use super::runner::Ran;
use super::{Checkout, ids, view};
use crate::carts::now;
use crate::claims::claimed_for;

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

impl Checkout {
    pub async fn confirm(
        &self,
        customer_id: &str,
        session_id: &str,
    ) -> Result<Outcome, ServiceError> {
        let record = self.record(customer_id, session_id).await?;
        if is_confirmed(&record) {
            return Ok(Outcome::Confirmed(view(record)));
        }
        let (_, cart_id) = ids(&record);
        let cart = self.carts.get(customer_id, cart_id).await?;
        let claimed = claimed_for(&cart, &record.planned_order_id);
        let cart = if claimed {
            cart
        } else {
            // Refused before the catalog is asked for prices.
            let mut copy = record.clone();
            step(&mut copy, Event::Confirm { claimed }, &now()).map_err(Refusal::error)?;
            self.ensure_current(&record).await?;
            let (cart, changed) = self.carts.refreshed(customer_id, cart).await?;
            if changed {
                return Ok(Outcome::Repriced(repriced(cart)));
            }
            cart
        };
        let confirm = Event::Confirm { claimed };
        match self
            .drive(session_id, confirm, Some(record), Some(&cart))
            .await?
        {
            Ran::Done(record) | Ran::Refused(record, Refusal::Confirmed) => {
                let order_id = &record.planned_order_id;
                tracing::info!(session_id, %order_id, "checkout confirmed");
                Ok(Outcome::Confirmed(view(record)))
            }
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }
}
