//! Checkout sessions and their retry-safe confirmation.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::de::IgnoredAny;
use storefront_platform::client::call::CallError;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{
    ConfirmCheckoutRequest, CreateCheckoutRequest, ExtendCheckoutRequest, GetCheckoutRequest,
    Repriced, UpdateCheckoutRequest,
};
use storefront_proto::common::v1::PostalAddress;
use storefront_proto::customers::v1::{AddressInput, GetAddressRequest};
use storefront_proto::error::codes;

use crate::bff_token::Shopper;
use crate::error::{About, ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::{ApiJson, OptionalJson};
use crate::model::bounded::Id;
use crate::model::cart::{Cart, CheckoutBody, CheckoutSession, CheckoutUpdate};
use crate::model::customers::AddressFields;
use crate::ratelimit::middleware::ClientNetwork;
use crate::state::AppState;

/// Opens a checkout session for a cart, shipping to an address of the
/// caller's book or one given in the body (a guest's way).
#[utoipa::path(post, path = "/checkout", tag = "Cart", security(("BFFToken" = [])), request_body = CheckoutBody,
    responses(
        (status = 201, description = "An OPEN session (awaitingPayment true: past what the caller or its network may hold unpaid, it holds nothing until its payment is authorized; docs/abuse-limits.md) with its shippingOptions (the market's methods to the address, cheapest first) and shippingMethodId (the cheapest), its totals (subtotal, discount, shipping, tax, total) and taxLines as the cart's market says (docs/markets.md), its expiresAt (`CHECKOUT_TTL_SECS`, 15 minutes by default; a guest's `CHECKOUT_TTL_GUEST_SECS`, 10; a checkout of a cart whose previous session still runs never past that one's first expiry plus one extension), its totalPrice the cart repriced now (current prices; codes that no longer apply dropped). Until then the session holds its lines' quantities: everyone else sees them gone from `availability.quantity`; a confirm sells them, and expiry, a newer session of the cart or a refused open releases them. It replaces the cart's previous OPEN session, if any, which then shows EXPIRED, releases its stock and answers 409 CHECKOUT_SUPERSEDED to confirm; the session that one had replaced is no longer kept (404)", body = CheckoutSession),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
        (status = 409, description = "CART_ORDERED; INSUFFICIENT_STOCK: too few units left to hold a line, nothing held; the message names each line short with the quantity left, and `errors` has one entry per line (field lineItems.{lineId}, code INSUFFICIENT_STOCK); LINE_UNAVAILABLE: a line is no longer for sale or priced in the cart's currency (field lineItems.{lineId}); HOLD_LIMIT_REACHED: the checkout would take the caller (a guest: HOLD_LIMIT_PER_VARIANT 10 of one variant, HOLD_LIMIT_TOTAL 100 in all; a customer: HOLD_LIMIT_PER_VARIANT_CUSTOMER 50, HOLD_LIMIT_TOTAL_CUSTOMER 500) or its client network (HOLD_LIMIT_PER_VARIANT_NETWORK 100, HOLD_LIMIT_TOTAL_NETWORK 1000) past what it may hold even paid (HOLD_LIMIT_PAID_MULTIPLE, 5, times those; past those limits but within that, the session opens with awaitingPayment true and holds nothing until paid); nothing held, the message names the limit and its setting, `errors` the lines past a per-variant limit (lineItems.{lineId}) or cartId", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: too many checkouts opened from this client network (checkout, RATE_LIMIT_CHECKOUT, 30 a minute) or in this session (checkout-session, RATE_LIMIT_CHECKOUT_SESSION, 10 a minute); see Retry-After", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: cartId; shippingAddressId (unknown, sent by a guest, or in a country the cart's market does not ship to); shippingAddress (required of a guest, sent with shippingAddressId, or a field against the address book's rules: shippingAddress.{field}; shippingAddress.country: no market sells in the cart's currency to that country, the message names where it ships); neither sent; or an empty cart", body = ErrorBody),
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
    let from_book = body.shipping_address_id.is_some();
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
    let opened = ds.cart().create_checkout(&correlation, message).await;
    let session = opened.map_err(|e| {
        let mut error = ApiError::from(e);
        // An address of the book the cart's market does not ship to: the
        // field the client sent.
        if from_book {
            for f in &mut error.errors {
                if f.field.starts_with("shippingAddress.") {
                    f.field = "shippingAddressId".into();
                }
            }
        }
        error
    })?;
    Ok((
        StatusCode::CREATED,
        Json(CheckoutSession::try_from(session)?),
    ))
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
        cart_id: String::new(),
    };
    Ok(Json(CheckoutSession::try_from(
        state
            .downstreams
            .cart()
            .get_checkout(&correlation, message)
            .await?,
    )?))
}

/// Confirms the session, creating its order, once its payment is
/// authorized for exactly its total. Retry-safe: however many times or
/// however concurrently it is called (and whether a provider's webhook
/// got there first), one order exists and every call answers 200 with the
/// same session.
#[utoipa::path(post, path = "/checkout/{sessionId}/confirm", tag = "Cart", security(("BFFToken" = [])),
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 200, description = "CONFIRMED, with orderId, and its payment (authorized; captured when fulfilment ships the order)", body = CheckoutSession),
        (status = 402, description = "PAYMENT_REQUIRED: the session has no payment authorized for its total (none started, declined, or waiting for 3-D Secure; a session with awaitingPayment true holds nothing until then): POST /checkout/{sessionId}/payment, then confirm again. No order was made", body = ErrorBody),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
        (status = 503, description = "SERVICE_UNAVAILABLE: the orders service or the payment provider is out of reach; retry the confirm (nothing is made twice)", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR on shippingAddress.country: the shop's markets no longer sell in the cart's currency to the session's country (no order was made)", body = ErrorBody),
        (status = 409, description = "CHECKOUT_EXPIRED (also when the stock it held was released); CHECKOUT_SUPERSEDED (a newer checkout of the cart replaced this one); CART_CHANGED since the session opened; CART_ORDERED through another session; CART_REPRICED: a price or discount code changed since the session opened, no order was made, and `cart` holds the repriced cart (open a new checkout to buy at the new total); CHECKOUT_REPRICED: the cart stands but the session's shipping or tax changed (the shop's markets changed: its method is no longer offered, a rate or a shipping price changed), no order was made, and `checkoutSession` holds the session repriced (still OPEN: pay its new total and confirm it again; a payment authorized for the old total was voided, as it is when the total changed since the payment, e.g. another shipping method); LINE_UNAVAILABLE: a line is no longer for sale or priced in the cart's currency (field lineItems.{lineId}); the units the session holds are its own, so stock sold to others meanwhile does not refuse it", body = ErrorBody),
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

/// Sets what an open session ships by, repricing its totals and tax at
/// once (a state-setting update: the same body twice is the same session).
#[utoipa::path(put, path = "/checkout/{sessionId}", tag = "Cart", security(("BFFToken" = [])), request_body = CheckoutUpdate,
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 200, description = "The session, OPEN, with shippingMethodId the one chosen and its totalPrice, totals and taxLines repriced for it (shippingOptions as the market offers them now)", body = CheckoutSession),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
        (status = 409, description = "CHECKOUT_EXPIRED (past expiresAt, superseded or its stock released); CHECKOUT_SUPERSEDED; CHECKOUT_CONFIRMED; CONCURRENT_MODIFICATION: a confirm of it is under way", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: shippingMethodId missing, or not one of the methods offered to the session's address (the message lists them)", body = ErrorBody),
    ))]
pub async fn update_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(session_id): Path<String>,
    ApiJson(body): ApiJson<CheckoutUpdate>,
) -> Result<Json<CheckoutSession>, ApiError> {
    let method = body.shipping_method_id.map(Id::into_inner).ok_or_else(|| {
        ApiError::invalid_field(
            "shippingMethodId",
            codes::REQUIRED,
            "shippingMethodId is required",
        )
    })?;
    let message = UpdateCheckoutRequest {
        customer_id: customer.id().to_string(),
        session_id,
        shipping_method_id: method,
    };
    let ds = &state.downstreams;
    let session = ds.cart().update_checkout(&correlation, message).await?;
    Ok(Json(CheckoutSession::try_from(session)?))
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
/// review (as the cart service answered it: no second call). 409
/// `CHECKOUT_REPRICED` when the cart stands but the session's shipping or
/// tax changed: the session as repriced, open, to confirm again. A cart or
/// session that cannot be shown is the cart service's fault (502), never a
/// 409 without it.
fn repriced_error(repriced: Repriced) -> Result<ApiError, ApiError> {
    let shown = |v: Result<serde_json::Value, _>| v.map_err(|_| ApiError::internal());
    let message = repriced.message;
    let (code, about) = match (repriced.session, repriced.cart) {
        (Some(session), _) => {
            let session = shown(serde_json::to_value(CheckoutSession::try_from(session)?))?;
            let about = About {
                checkout_session: Some(session),
                ..About::default()
            };
            ("CHECKOUT_REPRICED", about)
        }
        (None, Some(cart)) => {
            let cart = shown(serde_json::to_value(Cart::try_from(cart)?))?;
            let about = About {
                cart: Some(cart),
                ..About::default()
            };
            ("CART_REPRICED", about)
        }
        (None, None) => return Err(ApiError::internal()),
    };
    let mut error = ApiError::new(StatusCode::CONFLICT, code, message.clone()).field(
        "totalPrice",
        "CHANGED",
        message,
    );
    error.about = Some(Box::new(about));
    Ok(error)
}
