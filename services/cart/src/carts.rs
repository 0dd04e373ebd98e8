//! Cart lifecycle and line items. Every write is a compare-and-set on the
//! stored cart, retried on conflict, so concurrent changes all land.

use std::collections::HashMap;
use std::sync::Arc;
use storefront_proto::error::codes;

use prost::Message;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::recent::Recent;
use storefront_platform::store::{Held, Store, Updated, Versioned};
use storefront_proto::cart::v1::{
    AddLineItemRequest, Cart, CartState, UpdateCartRequest, UpdateLineItemRequest,
};
use storefront_proto::catalog::v1::Product;
use storefront_proto::common::v1::LineItem;
use storefront_proto::common::v1::ResourceMeta;

use crate::category_keys::{CategoryKeys, Keys};
use crate::clients::CatalogPeer;
use crate::config::CartLimits;
use crate::market_set::Loaded;
pub(crate) use crate::offer::invalid;
use crate::offer::line_of;
use crate::pricing::reprice;
use crate::promotions::Catalogue;

pub const MAX_QUANTITY: u32 = 99;
/// Concurrent writers to one cart before a write gives up with 409.
const MAX_ATTEMPTS: usize = 128;

pub fn cart_key(id: &str) -> String {
    format!("cart:{id}")
}

pub use storefront_domain::time::now;

fn not_found(id: &str) -> ServiceError {
    ServiceError::not_found("cart", id)
}

pub fn version(cart: &Cart) -> i64 {
    cart.meta.as_ref().map_or(0, |m| m.version)
}

/// A new version of the cart, modified now.
pub(crate) fn touch(cart: &mut Cart) {
    if let Some(meta) = cart.meta.as_mut() {
        meta.version += 1;
        meta.last_modified_at = Some(now());
    }
}

/// The cart a compare-and-set wrote, or why it did not.
/// A cart as written: encoded, as stored and as the reply carries it
/// (the value itself stays in the store's turn for the cart's next writer).
pub struct EncodedCart(pub Vec<u8>);

impl EncodedCart {
    pub fn decode(&self) -> Result<Cart, ServiceError> {
        Cart::decode(self.0.as_slice())
            .map_err(|e| ServiceError::internal(format!("a cart just written: {e}")))
    }
}

/// A cart's totals and tax lines before checkout (`Loaded::estimate`).
fn estimate(cart: &mut Cart, loaded: &Loaded, keys: &HashMap<String, String>) {
    let (totals, tax_lines) = loaded.estimate(cart, keys);
    cart.totals = Some(totals);
    cart.tax_lines = tax_lines;
}

fn written<R>(updated: Updated<R, Vec<u8>>, cart_id: &str) -> Result<EncodedCart, ServiceError> {
    match updated {
        Updated::Done { value, .. } => Ok(EncodedCart(value)),
        Updated::Missing => Err(not_found(cart_id)),
        Updated::Contended => Err(ServiceError::new(
            ErrorKind::Conflict,
            codes::CONCURRENT_MODIFICATION,
            "the cart is busy; retry",
        )),
    }
}

fn quantity(q: u32) -> Result<u32, ServiceError> {
    if (1..=MAX_QUANTITY).contains(&q) {
        Ok(q)
    } else {
        Err(invalid(
            "quantity",
            codes::OUT_OF_RANGE,
            format!("quantity must be between 1 and {MAX_QUANTITY}"),
        ))
    }
}

pub struct Carts {
    pub store: Store,
    pub catalog: Arc<dyn CatalogPeer>,
    /// Products the catalog gave lately, to price lines (see `product`).
    pub recent_products: Recent<Arc<Product>>,
    pub promotions: Arc<std::sync::RwLock<Catalogue>>,
    pub limits: CartLimits,
    /// The shop's markets: what a cart may be in, and its tax.
    pub markets: crate::market_set::Markets,
    /// What a tax rate by category needs of the catalog.
    pub category_keys: Arc<CategoryKeys>,
}

/// 409 for a per-customer cap.
pub fn limit_reached(message: String) -> ServiceError {
    ServiceError::new(ErrorKind::Conflict, "LIMIT_REACHED", message)
}

impl Carts {
    pub async fn create(&self, customer_id: &str, currency: &str) -> Result<Cart, ServiceError> {
        // The currencies the shop's markets sell now, the first the default.
        let markets = self.markets.current();
        let sold = markets.set.currencies();
        let currency = match currency {
            "" => sold.first().copied().unwrap_or_default(),
            given => given,
        };
        if !sold.contains(&currency) {
            return Err(invalid(
                "currencyCode",
                codes::INVALID_VALUE,
                format!("currencyCode must be one of {}", sold.join(", ")),
            ));
        }
        let created = now();
        let id = uuid::Uuid::new_v4().to_string();
        let mut cart = Cart {
            meta: Some(ResourceMeta {
                id: id.clone(),
                version: 1,
                created_at: Some(created),
                last_modified_at: Some(created),
            }),
            customer_id: customer_id.to_string(),
            currency_code: currency.to_string(),
            state: CartState::Active as i32,
            ..Default::default()
        };
        let _nothing_to_drop = self.reprice(&mut cart)?;
        self.register(customer_id, &id).await?;
        self.store
            .insert_message(&cart_key(&id), &cart, Some(self.limits.idle_ttl))
            .await?;
        Ok(cart)
    }

    /// The cart if it is `customer_id`'s; anyone else's is 404.
    pub async fn get(&self, customer_id: &str, cart_id: &str) -> Result<Cart, ServiceError> {
        Ok(self.get_versioned(customer_id, cart_id).await?.value)
    }

    /// The cart and the version it is stored at.
    pub async fn get_versioned(
        &self,
        customer_id: &str,
        cart_id: &str,
    ) -> Result<Versioned<Cart>, ServiceError> {
        let found = self.store.get_message::<Cart>(&cart_key(cart_id)).await?;
        found
            .filter(|c| c.value.customer_id == customer_id)
            .ok_or_else(|| not_found(cart_id))
    }

    /// The cart read in this process's turn at it, to write it back by one
    /// compare-and-set when nothing changed it since (`modify_from`).
    async fn get_held(
        &self,
        customer_id: &str,
        cart_id: &str,
    ) -> Result<Held<'_, Cart>, ServiceError> {
        let found = self.store.read_held::<Cart>(&cart_key(cart_id)).await?;
        found
            .filter(|c| c.value.value.customer_id == customer_id)
            .ok_or_else(|| not_found(cart_id))
    }

    pub async fn delete(&self, customer_id: &str, cart_id: &str) -> Result<(), ServiceError> {
        self.get(customer_id, cart_id).await?;
        self.store.delete(&cart_key(cart_id)).await?;
        Ok(())
    }

    /// Reprices `cart`; the codes that no longer apply are dropped.
    pub(crate) fn reprice(&self, cart: &mut Cart) -> Result<Vec<String>, ServiceError> {
        let catalogue = self.promotions.read().unwrap_or_else(|p| p.into_inner());
        reprice(cart, &catalogue, now().seconds)
    }

    /// Applies `change` to an active cart of `customer_id` and reprices it.
    pub async fn modify(
        &self,
        customer_id: &str,
        cart_id: &str,
        change: impl FnMut(&mut Cart) -> Result<(), ServiceError>,
    ) -> Result<EncodedCart, ServiceError> {
        self.modify_from(customer_id, cart_id, None, change).await
    }

    /// The category keys a tax by category needs: asked of the catalog
    /// only while some market taxes by category.
    pub(crate) async fn keys_for(&self, loaded: &Loaded) -> Result<Keys, ServiceError> {
        if loaded.taxes_by_category() {
            self.category_keys.current().await
        } else {
            Ok(Keys::default())
        }
    }

    /// Sets `cart`'s estimated totals and tax lines in the markets as they
    /// are now (a read shows them as of now, not as of the last write).
    pub async fn estimated(&self, mut cart: Cart) -> Result<Cart, ServiceError> {
        let loaded = self.markets.current();
        let keys = self.keys_for(&loaded).await?;
        estimate(&mut cart, &loaded, &keys);
        Ok(cart)
    }

    /// As `modify`, starting from the cart as read (`seed`).
    async fn modify_from(
        &self,
        customer_id: &str,
        cart_id: &str,
        seed: Option<Held<'_, Cart>>,
        mut change: impl FnMut(&mut Cart) -> Result<(), ServiceError>,
    ) -> Result<EncodedCart, ServiceError> {
        let loaded = self.markets.current();
        let keys = self.keys_for(&loaded).await?;
        self.write(customer_id, cart_id, seed, |cart| {
            if cart.state == CartState::Ordered as i32 {
                return Err(ServiceError::new(
                    ErrorKind::Conflict,
                    codes::CART_ORDERED,
                    "this cart was ordered; start a new one",
                ));
            }
            change(cart)?;
            let _dropped = self.reprice(cart)?;
            estimate(cart, &loaded, &keys);
            touch(cart);
            Ok(())
        })
        .await
    }

    /// Applies `change` to `customer_id`'s cart by compare-and-set (anyone
    /// else's is 404), renewing its idle TTL.
    pub(crate) async fn write(
        &self,
        customer_id: &str,
        cart_id: &str,
        seed: Option<Held<'_, Cart>>,
        mut change: impl FnMut(&mut Cart) -> Result<(), ServiceError>,
    ) -> Result<EncodedCart, ServiceError> {
        let ttl = Some(self.limits.idle_ttl);
        let key = cart_key(cart_id);
        // Boxed: a compare-and-set loop's future is several KB, and every
        // cart write and checkout step would otherwise hold it inline.
        let updated = Box::pin(self.store.update_message_encoded_from(
            &key,
            seed,
            MAX_ATTEMPTS,
            ttl,
            |cart: &mut Cart| {
                if cart.customer_id != customer_id {
                    return Err(not_found(cart_id));
                }
                change(cart)
            },
        ))
        .await?;
        written(updated, cart_id)
    }

    /// The state-setting update: version check, then the discount codes.
    pub async fn update(&self, req: UpdateCartRequest) -> Result<EncodedCart, ServiceError> {
        let at = now().seconds;
        self.modify(&req.customer_id, &req.cart_id, |cart| {
            if req.version > 0 && version(cart) != req.version {
                return Err(ServiceError::new(
                    ErrorKind::Conflict,
                    codes::CONCURRENT_MODIFICATION,
                    "the cart changed since you read it",
                ));
            }
            if req.clear_discount_codes {
                cart.discount_codes.clear();
            }
            if let Some(code) = req.discount_code.as_deref() {
                let catalogue = self.promotions.read().unwrap_or_else(|p| p.into_inner());
                let code = catalogue.check(code.trim(), cart, at)?;
                cart.discount_codes = catalogue.with_code(&cart.discount_codes, code);
            }
            Ok(())
        })
        .await
    }

    /// Adds a line priced by the catalog, merging with an equal line.
    pub async fn add_line(&self, req: AddLineItemRequest) -> Result<EncodedCart, ServiceError> {
        let wanted = quantity(req.quantity)?;
        // The catalog first, before the cart's turn: a cart's writers
        // queue for as long as one of them holds it, so it is held for the
        // read and the write only.
        let product = self.product(&req.product_id).await;
        // This process's writers of the cart queue here, so the read is
        // still current at the write: one compare-and-set, no re-read.
        // Someone else's or no cart is 404 before anything about the line.
        let seed = self.get_held(&req.customer_id, &req.cart_id).await?;
        let currency = &seed.value.value.currency_code;
        let (line, available) = line_of(&*product?, req.variant_id, currency)?;
        self.modify_from(&req.customer_id, &req.cart_id, Some(seed), |cart| {
            let lines = cart.line_items.len();
            let existing = cart
                .line_items
                .iter_mut()
                .find(|l| l.product_id == line.product_id && l.variant_id == line.variant_id);
            let total = existing.as_ref().map_or(0, |l| l.quantity) + wanted;
            if total > MAX_QUANTITY {
                return Err(invalid(
                    "quantity",
                    codes::OUT_OF_RANGE,
                    format!("at most {MAX_QUANTITY} of one item per cart"),
                ));
            }
            if total > available {
                return Err(invalid(
                    "quantity",
                    codes::OUT_OF_RANGE,
                    format!("only {available} left in stock"),
                ));
            }
            if existing.is_none() && lines >= self.limits.lines {
                return Err(limit_reached(format!(
                    "a cart holds at most {} distinct lines",
                    self.limits.lines
                )));
            }
            match existing {
                Some(l) => l.quantity = total,
                None => cart.line_items.push(LineItem {
                    quantity: wanted,
                    ..line.clone()
                }),
            }
            Ok(())
        })
        .await
    }

    /// Sets a line's quantity, checked against the variant's stock (and
    /// that it is still for sale) exactly as adding it is.
    pub async fn set_quantity(
        &self,
        req: UpdateLineItemRequest,
    ) -> Result<EncodedCart, ServiceError> {
        let q = quantity(req.quantity)?;
        let seed = self.get_held(&req.customer_id, &req.cart_id).await?;
        let line_id = req.line_item_id.as_str();
        let cart = &seed.value.value;
        let line = cart
            .line_items
            .iter()
            .find(|l| l.id == line_id)
            .ok_or_else(|| ServiceError::not_found("line item", line_id))?;
        let (_, available) = self
            .priced_line(&line.product_id, line.variant_id, &cart.currency_code)
            .await?;
        if q > available {
            return Err(invalid(
                "quantity",
                codes::OUT_OF_RANGE,
                format!("only {available} left in stock"),
            ));
        }
        self.modify_from(&req.customer_id, &req.cart_id, Some(seed), |cart| {
            let line = cart
                .line_items
                .iter_mut()
                .find(|l| l.id == line_id)
                .ok_or_else(|| ServiceError::not_found("line item", line_id))?;
            line.quantity = q;
            Ok(())
        })
        .await
    }

    pub async fn remove_line(
        &self,
        customer_id: &str,
        cart_id: &str,
        line_id: &str,
    ) -> Result<EncodedCart, ServiceError> {
        self.modify(customer_id, cart_id, |cart| {
            let before = cart.line_items.len();
            cart.line_items.retain(|l| l.id != line_id);
            if cart.line_items.len() == before {
                return Err(ServiceError::not_found("line item", line_id));
            }
            Ok(())
        })
        .await
    }
}
