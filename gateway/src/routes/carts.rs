//! Carts and their line items: the caller's own only (anyone else's is 404).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use storefront_proto::cart::v1::{
    AddLineItemRequest, CreateCartRequest, DeleteCartRequest, GetCartRequest,
    RemoveLineItemRequest, UpdateCartRequest, UpdateLineItemRequest,
};
use storefront_proto::error::codes;

use crate::bff_token::Shopper;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::{ApiJson, OptionalJson};
use crate::model::bounded::Id;
use crate::model::cart::{AddLineItemBody, Cart, CreateCartBody, QuantityBody, UpdateCartBody};
use crate::state::AppState;
use crate::transcode::{self, JsonBytes};

fn required(field: &str) -> ApiError {
    ApiError::invalid_field(field, codes::REQUIRED, format!("{field} is required"))
}

/// Starts a cart for the caller.
#[utoipa::path(post, path = "/carts", tag = "Cart", security(("BFFToken" = [])), request_body(content = CreateCartBody, description = "Optional: without a body (and then no Content-Type) the cart is in AUD"),
    responses(
        (status = 201, description = "The new, empty cart; it expires after CART_IDLE_TTL_SECS (30 days) without a change", body = Cart),
        (status = 409, description = "LIMIT_REACHED: the caller has MAX_ACTIVE_CARTS (20) active carts", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: currencyCode must be a currency some market sells now (the message names them)", body = ErrorBody),
    ))]
pub async fn create_cart(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    OptionalJson(body): OptionalJson<CreateCartBody>,
) -> Result<(StatusCode, JsonBytes), ApiError> {
    let currency_code = body.and_then(|b| b.currency_code).unwrap_or_default();
    let message = CreateCartRequest {
        customer_id: customer.id().to_string(),
        currency_code,
    };
    let reply = state
        .downstreams
        .cart()
        .create_cart_bytes(&correlation, message)
        .await?;
    Ok((StatusCode::CREATED, transcode::cart(&reply)?))
}

/// One of the caller's carts.
#[utoipa::path(get, path = "/carts/{cartId}", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id")),
    responses(
        (status = 200, description = "The cart", body = Cart),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
    ))]
pub async fn get_cart(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(cart_id): Path<String>,
) -> Result<JsonBytes, ApiError> {
    let message = GetCartRequest {
        customer_id: customer.id().to_string(),
        cart_id,
    };
    let reply = state
        .downstreams
        .cart()
        .get_cart_bytes(&correlation, message)
        .await?;
    transcode::cart(&reply)
}

/// Deletes a cart.
#[utoipa::path(delete, path = "/carts/{cartId}", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
    ))]
pub async fn delete_cart(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(cart_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let message = DeleteCartRequest {
        customer_id: customer.id().to_string(),
        cart_id,
    };
    state
        .downstreams
        .cart()
        .delete_cart(&correlation, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// State-setting update: apply a discount code (`null` removes them).
#[utoipa::path(put, path = "/carts/{cartId}", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id")), request_body = UpdateCartBody,
    responses(
        (status = 200, description = "The repriced cart", body = Cart),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
        (status = 409, description = "CONCURRENT_MODIFICATION (stale version) or CART_ORDERED", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR on discountCode: unknown, expired, not yet active, minimum not met, or nothing in the cart qualifies", body = ErrorBody),
    ))]
pub async fn update_cart(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(cart_id): Path<String>,
    ApiJson(body): ApiJson<UpdateCartBody>,
) -> Result<JsonBytes, ApiError> {
    let (discount_code, clear) = match body.discount_code {
        None => (None, false),
        Some(None) => (None, true),
        Some(Some(code)) => (Some(code.0), false),
    };
    let message = UpdateCartRequest {
        customer_id: customer.id().to_string(),
        cart_id,
        version: body.version.unwrap_or(0),
        discount_code,
        clear_discount_codes: clear,
    };
    let reply = state
        .downstreams
        .cart()
        .update_cart_bytes(&correlation, message)
        .await?;
    transcode::cart(&reply)
}

/// Adds a product variant at the catalog's price, merging equal lines.
#[utoipa::path(post, path = "/carts/{cartId}/line-items", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id")), request_body = AddLineItemBody,
    responses(
        (status = 200, description = "The repriced cart", body = Cart),
        (status = 404, description = "No such cart of the caller's", body = ErrorBody),
        (status = 409, description = "CART_ORDERED, or LIMIT_REACHED: the cart has MAX_CART_LINES (100) distinct lines", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: productId, variantId (unknown, not for sale, out of stock), quantity (1-99, stock)", body = ErrorBody),
    ))]
pub async fn add_line_item(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(cart_id): Path<String>,
    ApiJson(body): ApiJson<AddLineItemBody>,
) -> Result<JsonBytes, ApiError> {
    let product_id = body
        .product_id
        .map(Id::into_inner)
        .ok_or_else(|| required("productId"))?;
    let variant_id = body.variant_id.ok_or_else(|| required("variantId"))?;
    let quantity = body.quantity.ok_or_else(|| required("quantity"))?;
    let message = AddLineItemRequest {
        customer_id: customer.id().to_string(),
        cart_id,
        product_id,
        variant_id,
        quantity,
    };
    let reply = state
        .downstreams
        .cart()
        .add_line_item_bytes(&correlation, message)
        .await?;
    transcode::cart(&reply)
}

/// Sets a line's quantity.
#[utoipa::path(put, path = "/carts/{cartId}/line-items/{lineItemId}", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id"), ("lineItemId" = String, Path, description = "Line item id")),
    request_body = QuantityBody,
    responses(
        (status = 200, description = "The repriced cart", body = Cart),
        (status = 404, description = "No such cart or line", body = ErrorBody),
        (status = 409, description = codes::CART_ORDERED, body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: quantity 1-99", body = ErrorBody),
    ))]
pub async fn update_line_item(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path((cart_id, line_item_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<QuantityBody>,
) -> Result<JsonBytes, ApiError> {
    let quantity = body.quantity.ok_or_else(|| required("quantity"))?;
    let message = UpdateLineItemRequest {
        customer_id: customer.id().to_string(),
        cart_id,
        line_item_id,
        quantity,
    };
    let reply = state
        .downstreams
        .cart()
        .update_line_item_bytes(&correlation, message)
        .await?;
    transcode::cart(&reply)
}

/// Removes a line.
#[utoipa::path(delete, path = "/carts/{cartId}/line-items/{lineItemId}", tag = "Cart", security(("BFFToken" = [])),
    params(("cartId" = String, Path, description = "Cart id"), ("lineItemId" = String, Path, description = "Line item id")),
    responses(
        (status = 200, description = "The repriced cart", body = Cart),
        (status = 404, description = "No such cart or line", body = ErrorBody),
        (status = 409, description = codes::CART_ORDERED, body = ErrorBody),
    ))]
pub async fn remove_line_item(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path((cart_id, line_item_id)): Path<(String, String)>,
) -> Result<JsonBytes, ApiError> {
    let message = RemoveLineItemRequest {
        customer_id: customer.id().to_string(),
        cart_id,
        line_item_id,
    };
    let reply = state
        .downstreams
        .cart()
        .remove_line_item_bytes(&correlation, message)
        .await?;
    transcode::cart(&reply)
}
