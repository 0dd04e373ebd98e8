//! A cart brought up to date before money changes hands: every line at the
//! catalog's current price, every code re-checked. Checkout runs it when a
//! session opens and again at confirm, so an order is never made at a
//! stale price. Stock is not its business: the session's hold is
//! (`holds`), and its own held units are not among those available.

use std::collections::HashMap;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::cart::v1::Cart;
use storefront_proto::common::v1::{LineItem, Money};

use crate::carts::Carts;
use crate::offer::{no_such_product, priced};

/// A line that can no longer be bought as it is (gone, not for sale, not
/// priced in the cart's currency).
fn unavailable(line_id: &str, name: &str, why: &str) -> ServiceError {
    let message = format!("{name} can no longer be bought as it is in the cart: {why}");
    ServiceError::new(ErrorKind::Conflict, "LINE_UNAVAILABLE", message.clone()).with_violation(
        FieldViolation::new(format!("lineItems.{line_id}"), "UNAVAILABLE", message),
    )
}

/// The name a shopper knows a line by.
fn shown_name(line: &LineItem) -> &str {
    line.name
        .as_ref()
        .and_then(|n| n.values.values().next())
        .map_or(line.sku.as_str(), String::as_str)
}

impl Carts {
    /// Each line's current unit price, by (product, variant), from one
    /// catalog call for the whole cart; a line that can no longer be bought
    /// as it is refuses the whole (`LINE_UNAVAILABLE`, naming the line).
    async fn current_prices(
        &self,
        cart: &Cart,
    ) -> Result<HashMap<(String, u32), Money>, ServiceError> {
        let ids = crate::offer::product_ids(cart);
        let products = self.prices(&ids, &cart.currency_code).await?;
        let mut prices = HashMap::with_capacity(cart.line_items.len());
        for line in &cart.line_items {
            let priced = products
                .get(&line.product_id)
                .ok_or_else(|| no_such_product(&line.product_id))
                .and_then(|p| priced(p, line.variant_id, &cart.currency_code));
            let (priced, _stock) = match priced {
                Ok(found) => found,
                Err(e) if e.kind == ErrorKind::Validation => {
                    return Err(unavailable(&line.id, shown_name(line), &e.message));
                }
                Err(e) => return Err(e),
            };
            if let Some(price) = priced.unit_price {
                prices.insert((line.product_id.clone(), line.variant_id), price);
            }
        }
        Ok(prices)
    }

    /// The cart at current prices with its codes re-checked, and whether
    /// that changed it. Written back (a new version) only when it did.
    pub async fn refresh(
        &self,
        customer_id: &str,
        cart_id: &str,
    ) -> Result<(Cart, bool), ServiceError> {
        let cart = self.get(customer_id, cart_id).await?;
        self.refreshed(customer_id, cart).await
    }

    /// As [`Carts::refresh`], from the cart as just read.
    pub async fn refreshed(
        &self,
        customer_id: &str,
        cart: Cart,
    ) -> Result<(Cart, bool), ServiceError> {
        let cart_id = cart.meta.as_ref().map_or("", |m| m.id.as_str());
        let prices = self.current_prices(&cart).await?;
        let current = |c: &mut Cart| {
            for line in &mut c.line_items {
                if let Some(p) = prices.get(&(line.product_id.clone(), line.variant_id)) {
                    line.unit_price = Some(p.clone());
                }
            }
        };
        let mut repriced = cart.clone();
        current(&mut repriced);
        let _dropped = self.reprice(&mut repriced)?;
        if repriced == cart {
            return Ok((cart, false));
        }
        let written = self
            .modify(customer_id, cart_id, |c| {
                current(c);
                Ok(())
            })
            .await?;
        Ok((written.decode()?, true))
    }
}
