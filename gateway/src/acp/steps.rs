//! The facade's steps over the same cart and checkout calls the REST API
//! makes (no second cart or checkout logic): set the cart's lines to the
//! agent's items, open a checkout to an address, choose its shipping. A
//! refusal the agent can act on (an unknown item, too few in stock, an
//! address the market does not ship to) becomes a `messages` entry of the
//! answer rather than an error.

use prost::Message as _;
use storefront_proto::cart::v1::{
    AddLineItemRequest, Cart, CheckoutSession, CreateCheckoutRequest, GetCartRequest,
    GetCheckoutRequest, RemoveLineItemRequest, UpdateCheckoutRequest, UpdateLineItemRequest,
};
use storefront_proto::common::v1::PostalAddress;
use storefront_proto::customers::v1::AddressInput;

use super::render::names;
use super::wire::{Address, ItemIn, Message};
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::state::AppState;

/// The most items one session may name.
pub const MAX_ITEMS: usize = 100;

/// Who a session belongs to, for every call about it.
pub struct Owner<'a> {
    pub state: &'a AppState,
    pub correlation: &'a CallContext,
    pub customer_id: String,
    pub cart_id: String,
    /// `agent:{id}`: the agent's hold limits (the network bounds).
    pub network: String,
}

fn decoded(bytes: bytes::Bytes) -> Result<Cart, ApiError> {
    Cart::decode(bytes).map_err(ApiError::bad_gateway)
}

/// A refusal the agent can act on, as a message; anything else stays an error.
fn as_message(error: ApiError, param: String, what: &str) -> Result<Message, ApiError> {
    // The cart's refusals of a quantity name the stock in their message
    // ("only 3 left in stock", "this variant is out of stock").
    let short = error.errors.iter().any(|f| f.message.contains("stock"));
    let code = match (error.status.as_u16(), error.code.as_deref()) {
        (404, _) => "invalid",
        (409, Some("INSUFFICIENT_STOCK" | "LINE_UNAVAILABLE")) => "out_of_stock",
        (409, Some("HOLD_LIMIT_REACHED")) => "quantity_exceeded",
        (422, _) if short => "out_of_stock",
        (422, _) => "invalid",
        _ => return Err(error),
    };
    Ok(Message::error(
        code,
        Some(param),
        format!("{what}: {}", error.message),
    ))
}

impl Owner<'_> {
    pub async fn cart(&self) -> Result<Cart, ApiError> {
        let message = GetCartRequest {
            customer_id: self.customer_id.clone(),
            cart_id: self.cart_id.clone(),
        };
        let found = self
            .state
            .downstreams
            .cart()
            .get_cart_bytes(self.correlation, message)
            .await;
        // No such cart of this buyer's: no such session (the cart is ours to know of).
        let bytes = found
            .map_err(ApiError::from)
            .map_err(|e| match e.status.as_u16() {
                404 => ApiError::new(
                    e.status,
                    "not_found",
                    "no such checkout session of this agent's",
                ),
                _ => e,
            })?;
        decoded(bytes)
    }

    /// The cart's current checkout session, if one was opened.
    pub async fn checkout(&self) -> Result<Option<CheckoutSession>, ApiError> {
        let message = GetCheckoutRequest {
            customer_id: self.customer_id.clone(),
            cart_id: self.cart_id.clone(),
            session_id: String::new(),
        };
        match self
            .state
            .downstreams
            .cart()
            .get_checkout(self.correlation, message)
            .await
        {
            Ok(session) => Ok(Some(session)),
            Err(e) => {
                let error = ApiError::from(e);
                if error.status.as_u16() == 404 {
                    Ok(None)
                } else {
                    Err(error)
                }
            }
        }
    }

    /// Makes the cart's lines the agent's items; what cannot be had is a
    /// message naming the item.
    pub async fn set_lines(
        &self,
        cart: &Cart,
        items: &[ItemIn],
        messages: &mut Vec<Message>,
    ) -> Result<(), ApiError> {
        let cart_calls = self.state.downstreams.cart();
        for line in &cart.line_items {
            let kept = items
                .iter()
                .any(|i| parse_item(&i.id) == Some((line.product_id.as_str(), line.variant_id)));
            if !kept {
                let message = RemoveLineItemRequest {
                    customer_id: self.customer_id.clone(),
                    cart_id: self.cart_id.clone(),
                    line_item_id: line.id.clone(),
                };
                cart_calls
                    .remove_line_item_bytes(self.correlation, message)
                    .await?;
            }
        }
        for (n, item) in items.iter().enumerate() {
            let param = format!("$.line_items[{n}].id");
            let Some((product_id, variant_id)) = parse_item(&item.id) else {
                messages.push(Message::error(
                    "invalid",
                    Some(param),
                    "an item id is {productId}:{variantId}",
                ));
                continue;
            };
            let quantity = item.quantity.unwrap_or(1);
            let present = cart
                .line_items
                .iter()
                .find(|l| l.product_id == product_id && l.variant_id == variant_id);
            let done = match present {
                Some(line) if line.quantity == quantity => continue,
                Some(line) => {
                    let message = UpdateLineItemRequest {
                        customer_id: self.customer_id.clone(),
                        cart_id: self.cart_id.clone(),
                        line_item_id: line.id.clone(),
                        quantity,
                    };
                    cart_calls
                        .update_line_item_bytes(self.correlation, message)
                        .await
                }
                None => {
                    let message = AddLineItemRequest {
                        customer_id: self.customer_id.clone(),
                        cart_id: self.cart_id.clone(),
                        product_id: product_id.to_string(),
                        variant_id,
                        quantity,
                    };
                    cart_calls
                        .add_line_item_bytes(self.correlation, message)
                        .await
                }
            };
            if let Err(e) = done {
                messages.push(as_message(ApiError::from(e), param, &item.id)?);
            }
        }
        Ok(())
    }

    /// Opens a checkout to `address` (checked by the address book's rules),
    /// then sets `method` when one is chosen. None, with a message, when the
    /// agent must change something first.
    pub async fn open(
        &self,
        address: &Address,
        method: Option<&str>,
        messages: &mut Vec<Message>,
    ) -> Result<Option<CheckoutSession>, ApiError> {
        let ds = &self.state.downstreams;
        let checked = ds
            .customers()
            .check_address(self.correlation, address_input(address))
            .await;
        let checked = match checked {
            Ok(a) => a,
            Err(e) => {
                let error = ApiError::from(e);
                let field = error
                    .errors
                    .first()
                    .map(|f| f.field.clone())
                    .unwrap_or_default();
                let param = format!("$.fulfillment_details.address.{}", acp_field(&field));
                messages.push(as_message(error, param, "the address")?);
                return Ok(None);
            }
        };
        let message = CreateCheckoutRequest {
            customer_id: self.customer_id.clone(),
            cart_id: self.cart_id.clone(),
            shipping_address: Some(PostalAddress::from(checked)),
            client_network: self.network.clone(),
        };
        let session = match ds.cart().create_checkout(self.correlation, message).await {
            Ok(s) => s,
            Err(e) => {
                let error = ApiError::from(e);
                let param = match error.errors.first() {
                    Some(f) if f.field.starts_with("shippingAddress") => {
                        "$.fulfillment_details.address".to_string()
                    }
                    _ => "$.line_items".to_string(),
                };
                messages.push(as_message(error, param, "the checkout")?);
                return Ok(None);
            }
        };
        match method.filter(|m| *m != session.shipping_method_id) {
            Some(m) => self
                .choose(&session.id, m, messages)
                .await
                .map(|s| Some(s.unwrap_or(session))),
            None => Ok(Some(session)),
        }
    }

    /// Sets the session's shipping method; a method not offered is a message.
    pub async fn choose(
        &self,
        session_id: &str,
        method: &str,
        messages: &mut Vec<Message>,
    ) -> Result<Option<CheckoutSession>, ApiError> {
        let message = UpdateCheckoutRequest {
            customer_id: self.customer_id.clone(),
            session_id: session_id.to_string(),
            shipping_method_id: method.to_string(),
        };
        match self
            .state
            .downstreams
            .cart()
            .update_checkout(self.correlation, message)
            .await
        {
            Ok(s) => Ok(Some(s)),
            Err(e) => {
                let param = "$.selected_fulfillment_options[0].option_id".to_string();
                messages.push(as_message(ApiError::from(e), param, method)?);
                Ok(None)
            }
        }
    }
}

/// `{productId}:{variantId}`.
pub fn parse_item(id: &str) -> Option<(&str, u32)> {
    let (product, variant) = id.rsplit_once(':')?;
    let variant = variant.parse().ok()?;
    (!product.is_empty()).then_some((product, variant))
}

fn address_input(a: &Address) -> AddressInput {
    let (first, last) = names(&a.name);
    AddressInput {
        first_name: first.into_owned(),
        last_name: last.into_owned(),
        street_name: a.line_one.clone(),
        street_number: a.line_two.clone().unwrap_or_default(),
        city: a.city.clone(),
        postal_code: a.postal_code.clone(),
        state: a.state.clone(),
        country: a.country.clone(),
        is_default: false,
        region: String::new(),
    }
}

/// The protocol's name of an address field of ours.
fn acp_field(ours: &str) -> &'static str {
    match ours {
        "firstName" | "lastName" => "name",
        "streetName" => "line_one",
        "streetNumber" => "line_two",
        "postalCode" => "postal_code",
        "city" => "city",
        "state" | "region" => "state",
        _ => "country",
    }
}
