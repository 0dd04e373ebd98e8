//! Checkout sessions and their retry-safe confirmation.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::de::IgnoredAny;
use storefront_platform::client::call::CallError;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{
    ConfirmCheckoutRequest, CreateCheckoutRequest, ExtendCheckoutRequest, GetCheckoutRequest,
    Repriced,
};
use storefront_proto::common::v1::PostalAddress;
use storefront_proto::customers::v1::{AddressInput, GetAddressRequest};
use storefront_proto::error::codes;

use crate::bff_token::Shopper;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::{ApiJson, OptionalJson};
use crate::model::bounded::Id;
use crate::model::cart::{Cart, CheckoutBody, CheckoutSession};
use crate::model::customers::AddressFields;
use crate::ratelimit::middleware::ClientNetwork;
use crate::state::AppState;

/// Opens a checkout session for a cart, shipping to an address of the
/// caller's book or one given in the body (a guest's way).
#[utoipa::path(post, path = "/checkout", tag = "Cart", security(("BFFToken" = [])), request_body = CheckoutBody,
    responses(
        (status = 201, description = "An OPEN session with its expiresAt (`CHECKOUT_TTL_SECS`, 15 minutes by default; a guest's `CHECKOUT_TTL_GUEST_SECS`, 10; a checkout of a cart whose previous session still runs never past that one's first expiry plus one extension), its totalPrice the cart repriced now (current prices; codes that no longer apply dropped). Until then the session holds its lines' quantities: everyone else sees them gone from `availability.quantity`; a confirm sells them, and expiry, a newer session of the cart or a refused open releases them. It replaces the cart's previous OPEN session, if any, which then shows EXPIRED, releases its stock and answers 409 CHECKOUT_SUPERSEDED to confirm; the session that one had replaced is no longer kept (404)", body = CheckoutSession),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
        (status = 409, description = "CART_ORDERED; INSUFFICIENT_STOCK: too few units left to hold a line, nothing held; the message names each line short with the quantity left, and `errors` has one entry per line (field lineItems.{lineId}, code INSUFFICIENT_STOCK); LINE_UNAVAILABLE: a line is no longer for sale or priced in the cart's currency (field lineItems.{lineId}); HOLD_LIMIT_REACHED: the checkout would take the caller (a guest: HOLD_LIMIT_PER_VARIANT 10 of one variant, HOLD_LIMIT_TOTAL 100 in all; a customer: HOLD_LIMIT_PER_VARIANT_CUSTOMER 50, HOLD_LIMIT_TOTAL_CUSTOMER 500) or its client network (HOLD_LIMIT_PER_VARIANT_NETWORK 100, HOLD_LIMIT_TOTAL_NETWORK 1000) past what it may hold in open checkouts; nothing held, the message names the limit and its setting, `errors` the lines past a per-variant limit (lineItems.{lineId}) or cartId", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: too many checkouts opened from this client network (checkout, RATE_LIMIT_CHECKOUT, 30 a minute) or in this session (checkout-session, RATE_LIMIT_CHECKOUT_SESSION, 10 a minute); see Retry-After", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: cartId; shippingAddressId (unknown, or sent by a guest); shippingAddress (required of a guest, sent with shippingAddressId, or a field against the address book's rules: shippingAddress.{field}); neither sent; or an empty cart", body = ErrorBody),
    ))]
pub async fn create_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    network: Option<Extension<ClientNetwork>>,
    ApiJson(body): ApiJson<CheckoutBody>,
) -> Result<(StatusCode, Json<CheckoutSession>), ApiError> {
    let cart_id = body
        .cart_id
        .map(Id::into_inner)
        .ok_or_else(|| ApiError::invalid_field("cartId", codes::REQUIRED, "cartId is required"))?;
    let address = shipping_address(
        &state,
        &correlation,
        &customer,
        body.shipping_address_id.map(Id::into_inner),
        body.shipping_address,
    )
    .await?;
    let ds = &state.downstreams;
    let to = PostalAddress::from(address);
    let message = CreateCheckoutRequest {
        customer_id: customer.id().to_string(),
        cart_id,
        shipping_address: Some(to),
        client_network: network.map(|n| n.0.0).unwrap_or_default(),
    };
    let session =
        CheckoutSession::try_from(ds.cart().create_checkout(&correlation, message).await?)?;
    Ok((StatusCode::CREATED, Json(session)))
}

/// Where the order ships: an address of the caller's book, or one given
/// in the body, checked by the address book's rules (a guest's only way).
async fn shipping_address(
    state: &AppState,
    correlation: &CallContext,
    customer: &Shopper,
    address_id: Option<String>,
    given: Option<AddressFields>,
) -> Result<AddressInput, ApiError> {
    let ds = &state.downstreams;
    match (address_id, given) {
        (Some(_), Some(_)) => Err(ApiError::invalid_field(
            "shippingAddress",
            codes::INVALID_VALUE,
            "send shippingAddressId or shippingAddress, not both",
        )),
        (Some(_), None) if customer.is_guest() => Err(ApiError::invalid_field(
            "shippingAddressId",
            codes::INVALID_VALUE,
            "a guest has no address book: send shippingAddress",
        )),
        (Some(address_id), None) => {
            let lookup = GetAddressRequest {
                customer_id: customer.id().to_string(),
                address_id,
            };
            match ds.customers().get_address(correlation, lookup).await {
                Ok(a) => Ok(a.fields.unwrap_or_default()),
                Err(CallError::Status(s)) if s.code() == tonic::Code::NotFound => {
                    Err(ApiError::invalid_field(
                        "shippingAddressId",
                        codes::INVALID_VALUE,
                        "no such address in your address book",
                    ))
                }
                Err(e) => Err(e.into()),
            }
        }
        (None, Some(fields)) => {
            let checked = ds
                .customers()
                .check_address(correlation, fields.into())
                .await;
            checked.map_err(|e| {
                let mut error = ApiError::from(e);
                for f in &mut error.errors {
                    f.field = format!("shippingAddress.{}", f.field);
                }
                error
            })
        }
        (None, None) if customer.is_guest() => Err(ApiError::invalid_field(
            "shippingAddress",
            codes::REQUIRED,
            "shippingAddress is required",
        )),
        (None, None) => Err(ApiError::invalid_field(
            "shippingAddressId",
            codes::REQUIRED,
            "shippingAddressId (or shippingAddress) is required",
        )),
    }
}

/// A checkout session of the caller's.
#[utoipa::path(get, path = "/checkout/{sessionId}", tag = "Cart", security(("BFFToken" = [])),
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 200, description = "The session (EXPIRED once past expiresAt unconfirmed)", body = CheckoutSession),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
    ))]
pub async fn get_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(session_id): Path<String>,
) -> Result<Json<CheckoutSession>, ApiError> {
    let message = GetCheckoutRequest {
        customer_id: customer.id().to_string(),
        session_id,
    };
    Ok(Json(CheckoutSession::try_from(
        state
            .downstreams
            .cart()
            .get_checkout(&correlation, message)
            .await?,
    )?))
}

/// Confirms the session, creating its order. Retry-safe: however many times
/// or however concurrently it is called, one order exists and every call
/// answers 200 with the same session.
#[utoipa::path(post, path = "/checkout/{sessionId}/confirm", tag = "Cart", security(("BFFToken" = [])),
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 200, description = "CONFIRMED, with orderId", body = CheckoutSession),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
        (status = 409, description = "CHECKOUT_EXPIRED (also when the stock it held was released); CHECKOUT_SUPERSEDED (a newer checkout of the cart replaced this one); CART_CHANGED since the session opened; CART_ORDERED through another session; CART_REPRICED: a price or discount code changed since the session opened, no order was made, and `cart` holds the repriced cart (open a new checkout to buy at the new total); LINE_UNAVAILABLE: a line is no longer for sale or priced in the cart's currency (field lineItems.{lineId}); the units the session holds are its own, so stock sold to others meanwhile does not refuse it", body = ErrorBody),
        (status = 415, description = "A body that is not JSON (an empty body needs no Content-Type)", body = ErrorBody),
    ))]
pub async fn confirm_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(session_id): Path<String>,
    OptionalJson(_body): OptionalJson<IgnoredAny>,
) -> Result<Json<CheckoutSession>, ApiError> {
    let message = ConfirmCheckoutRequest {
        customer_id: customer.id().to_string(),
        session_id: session_id.clone(),
    };
    let reply = state
        .downstreams
        .cart()
        .confirm_checkout(&correlation, message)
        .await?;
    match reply.outcome {
        Some(Outcome::Confirmed(session)) => Ok(Json(CheckoutSession::try_from(session)?)),
        Some(Outcome::Repriced(repriced)) => Err(repriced_error(repriced)?),
        // A cart service that answers neither is a bug, not the client's.
        None => Err(ApiError::internal()),
    }
}

/// Extends an open session once: its expiresAt, and the hold on its
/// stock, run `CHECKOUT_TTL_SECS` again from now, never past the first
/// expiry of its cart's sessions plus one checkout time.
#[utoipa::path(post, path = "/checkout/{sessionId}/extend", tag = "Cart", security(("BFFToken" = [])),
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 200, description = "The session, OPEN, with its new expiresAt: a checkout time from now (`CHECKOUT_TTL_SECS`, a guest's `CHECKOUT_TTL_GUEST_SECS`), but never past the first expiresAt of the cart's line of sessions (however often it was checked out again) plus one checkout time", body = CheckoutSession),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
        (status = 409, description = "CHECKOUT_ALREADY_EXTENDED (once per session, or the hold already runs as long as it may); CHECKOUT_EXPIRED (past expiresAt, superseded or its stock released); CHECKOUT_CONFIRMED", body = ErrorBody),
        (status = 415, description = "A body that is not JSON (an empty body needs no Content-Type)", body = ErrorBody),
    ))]
pub async fn extend_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(session_id): Path<String>,
    OptionalJson(_body): OptionalJson<IgnoredAny>,
) -> Result<Json<CheckoutSession>, ApiError> {
    let message = ExtendCheckoutRequest {
        customer_id: customer.id().to_string(),
        session_id,
    };
    let session = state
        .downstreams
        .cart()
        .extend_checkout(&correlation, message)
        .await?;
    Ok(Json(CheckoutSession::try_from(session)?))
}

/// 409 `CART_REPRICED`: no order; the cart as repriced, for the shopper to
/// review (as the cart service answered it: no second call). A cart that
/// cannot be shown is the cart service's fault (502), never a 409 without
/// its cart.
fn repriced_error(repriced: Repriced) -> Result<ApiError, ApiError> {
    let cart = repriced.cart.ok_or_else(ApiError::internal)?;
    let cart = serde_json::to_value(Cart::try_from(cart)?).map_err(|_| ApiError::internal())?;
    let mut error = ApiError::new(
        StatusCode::CONFLICT,
        "CART_REPRICED",
        repriced.message.clone(),
    )
    .field("totalPrice", "CHANGED", repriced.message);
    error.cart = Some(cart);
    Ok(error)
}
