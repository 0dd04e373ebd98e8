//! A cart claimed for the order a checkout makes: the one step that lets a
//! cart become at most one order, whatever the number of sessions,
//! confirms and replicas, and its undoing when the orders service refuses
//! that order.

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::{Held, Versioned};
use storefront_proto::cart::v1::{Cart, CartState};
use storefront_proto::error::codes;

use crate::carts::{Carts, touch, version};

/// Whether `cart` is claimed for `order_id`.
pub fn claimed_for(cart: &Cart, order_id: &str) -> bool {
    cart.state == CartState::Ordered as i32 && cart.order_id == order_id
}

impl Carts {
    /// Claims the cart for `order_id` (ACTIVE -> ORDERED by compare-and-set)
    /// if it is still at `expected_version`. Claiming again for the same
    /// order is a no-op, so a confirmation interrupted after it can be
    /// completed by the next one. `seen`: the cart as just read, with its
    /// stored version, written back without reading it again when nothing
    /// changed it since.
    pub async fn claim(
        &self,
        customer_id: &str,
        cart_id: &str,
        expected_version: i64,
        order_id: &str,
        seen: Option<Versioned<Cart>>,
    ) -> Result<(), ServiceError> {
        self.write(customer_id, cart_id, seen.map(Held::known), |cart| {
            if cart.state == CartState::Ordered as i32 {
                if cart.order_id == order_id {
                    return Ok(());
                }
                return Err(ServiceError::new(
                    ErrorKind::Conflict,
                    codes::CART_ORDERED,
                    "this cart was already ordered through another checkout",
                ));
            }
            if version(cart) != expected_version {
                return Err(ServiceError::new(
                    ErrorKind::Conflict,
                    "CART_CHANGED",
                    "the cart changed since checkout began; start a new checkout",
                ));
            }
            cart.state = CartState::Ordered as i32;
            cart.order_id = order_id.to_string();
            touch(cart);
            Ok(())
        })
        .await
        .map(|_| ())
    }

    /// Gives back a cart claimed for `order_id`, which the orders service
    /// refused: ACTIVE again, at a new version (so the session that claimed
    /// it is not confirmed without being opened again). A cart claimed for
    /// another order, or not claimed, is left as it is.
    pub async fn unclaim(
        &self,
        customer_id: &str,
        cart_id: &str,
        order_id: &str,
    ) -> Result<(), ServiceError> {
        let cart = self.get(customer_id, cart_id).await?;
        if !claimed_for(&cart, order_id) {
            return Ok(());
        }
        self.write(customer_id, cart_id, None, |cart| {
            if claimed_for(cart, order_id) {
                cart.state = CartState::Active as i32;
                cart.order_id.clear();
                touch(cart);
            }
            Ok(())
        })
        .await
        .map(|_| ())
    }
}
