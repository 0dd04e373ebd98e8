//! Which carts a customer has, so that their number is bounded: an index
//! per customer in the store, written by compare-and-set when a cart is
//! created. Carts that expired, were deleted or were ordered are pruned
//! from it lazily, only when the cap is reached, so the check costs one
//! read and one write, and at most the cap's reads when full.

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::{Cart, CartState};
use storefront_proto::error::codes;

use crate::carts::{Carts, cart_key, limit_reached};

const MAX_ATTEMPTS: usize = 64;

fn index_key(customer_id: &str) -> String {
    format!("carts-of:{customer_id}")
}

/// The ids, one per line (a cart id is a UUID).
fn decode(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

impl Carts {
    /// Records `cart_id` as one of `customer_id`'s active carts, or 409
    /// `LIMIT_REACHED` when they already have as many as allowed.
    pub(crate) async fn register(
        &self,
        customer_id: &str,
        cart_id: &str,
    ) -> Result<(), ServiceError> {
        let key = index_key(customer_id);
        let ttl = Some(self.limits.idle_ttl);
        for _ in 0..MAX_ATTEMPTS {
            let found = self.store.get(&key).await?;
            let (version, mut ids) = match found {
                Some(f) => (Some(f.version), decode(&f.value)),
                None => (None, Vec::new()),
            };
            if ids.len() >= self.limits.active_carts {
                ids = self.still_active(ids).await?;
            }
            if ids.len() >= self.limits.active_carts {
                return Err(limit_reached(format!(
                    "at most {} active carts per customer; order or delete one first",
                    self.limits.active_carts
                )));
            }
            ids.push(cart_id.to_string());
            let bytes = ids.join("\n").into_bytes();
            let written = match version {
                None => self.store.insert(&key, &bytes, ttl).await?,
                Some(v) => self.store.replace(&key, v, &bytes, ttl).await?.is_some(),
            };
            if written {
                return Ok(());
            }
        }
        Err(ServiceError::new(
            storefront_platform::error::ErrorKind::Conflict,
            codes::CONCURRENT_MODIFICATION,
            "carts are being created concurrently; retry",
        ))
    }

    /// The carts `customer_id` made lately (some may be gone or ordered).
    pub(crate) async fn owned_ids(&self, customer_id: &str) -> Result<Vec<String>, ServiceError> {
        let found = self.store.get(&index_key(customer_id)).await?;
        Ok(found.map(|f| decode(&f.value)).unwrap_or_default())
    }

    async fn still_active(&self, ids: Vec<String>) -> Result<Vec<String>, ServiceError> {
        let mut active = Vec::with_capacity(ids.len());
        for id in ids {
            let cart = self.store.get_message::<Cart>(&cart_key(&id)).await?;
            if cart.is_some_and(|c| c.value.state == CartState::Active as i32) {
                active.push(id);
            }
        }
        Ok(active)
    }
}
