//! Orders, in two live majors: v1 (`totalAmount`, deprecated) and v2
//! (`totals`). A path version picks one; without it the latest answers.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use storefront_proto::error::codes;
use storefront_proto::orders::v1::{
    CancelOrderRequest, GetOrderRequest, ListOrdersRequest, Order, OrderStatus,
};

use crate::bff_token::Customer;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::middleware::version::ApiVersion;
use crate::model::common::Paged;
use crate::model::orders::{OrderV1, OrderV2, StatusBody, parse_status};
use crate::query::{Listing, Orders, ParsedQuery};
use crate::state::AppState;

/// RFC 9745 `Deprecation` (2026-11-01) and RFC 8594 `Sunset` (six months on).
const DEPRECATED_SINCE: &str = "@1793491200";
const SUNSET: &str = "Sat, 01 May 2027 00:00:00 GMT";
const MIGRATION_LINK: &str = "<https://developer.storefront.example/migrations/orders-v1-to-v2>; rel=\"deprecation\"; type=\"text/html\"";

fn is_v1(version: ApiVersion) -> bool {
    version.from_path && version.major == 1
}

fn deprecated(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert("deprecation", HeaderValue::from_static(DEPRECATED_SINCE));
    headers.insert("sunset", HeaderValue::from_static(SUNSET));
    headers.insert("link", HeaderValue::from_static(MIGRATION_LINK));
    response
}

fn one(version: ApiVersion, order: Order) -> Result<Response, ApiError> {
    if is_v1(version) {
        Ok(deprecated(Json(OrderV1::try_from(order)?).into_response()))
    } else {
        Ok(Json(OrderV2::try_from(order)?).into_response())
    }
}

async fn list(
    state: &AppState,
    correlation: &CallContext,
    customer: &Customer,
    version: ApiVersion,
    parsed: ParsedQuery,
) -> Result<Response, ApiError> {
    let message = ListOrdersRequest {
        customer_id: customer.id().to_string(),
        query: Some(parsed.list),
    };
    let reply = state
        .downstreams
        .orders()
        .list_orders(correlation, message)
        .await?;
    if is_v1(version) {
        let results = reply
            .orders
            .into_iter()
            .map(OrderV1::try_from)
            .collect::<Result<_, _>>()?;
        Ok(deprecated(
            Json(Paged::new(reply.page, results)?).into_response(),
        ))
    } else {
        let results = reply
            .orders
            .into_iter()
            .map(OrderV2::try_from)
            .collect::<Result<_, _>>()?;
        Ok(Json(Paged::new(reply.page, results)?).into_response())
    }
}

/// The caller's orders; `/orders/v1` answers v1 (deprecated), `/orders/v2`
/// and `/orders` answer v2.
#[utoipa::path(get, path = "/orders", tag = "Orders", security(("BFFToken" = [])),
    params(Listing<Orders>),
    responses(
        (status = 200, description = "A page of orders (v2 shape; v1 has totalAmount in place of totals and carries Deprecation, Sunset and Link headers)", body = Paged<OrderV2>),
        (status = 400, description = "INVALID_QUERY_PARAMETER, INVALID_SORT_FIELD or INVALID_FILTER", body = ErrorBody),
    ))]
pub async fn list_orders(
    State(state): State<AppState>,
    correlation: CallContext,
    version: ApiVersion,
    customer: Customer,
    Listing(parsed, _): Listing<Orders>,
) -> Result<Response, ApiError> {
    list(&state, &correlation, &customer, version, parsed).await
}

/// The orders of `customerId` (`me` or the caller's own id; else 403).
#[utoipa::path(get, path = "/customers/{customerId}/orders", tag = "Orders", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id"), Listing<Orders>),
    responses(
        (status = 200, description = "A page of orders, as GET /orders", body = Paged<OrderV2>),
        (status = 403, description = "Another customer's id", body = ErrorBody),
    ))]
pub async fn customer_orders(
    State(state): State<AppState>,
    correlation: CallContext,
    version: ApiVersion,
    customer: Customer,
    Path(customer_id): Path<String>,
    Listing(parsed, _): Listing<Orders>,
) -> Result<Response, ApiError> {
    customer.owns(&customer_id)?;
    list(&state, &correlation, &customer, version, parsed).await
}

/// One order of the caller's.
#[utoipa::path(get, path = "/orders/{orderId}", tag = "Orders", security(("BFFToken" = [])),
    params(("orderId" = String, Path, description = "Order id")),
    responses(
        (status = 200, description = "The order (latest representation, v2)", body = OrderV2),
        (status = 404, description = "No such order of the caller's", body = ErrorBody),
    ))]
pub async fn get_order(
    State(state): State<AppState>,
    correlation: CallContext,
    version: ApiVersion,
    customer: Customer,
    Path(order_id): Path<String>,
) -> Result<Response, ApiError> {
    let message = GetOrderRequest {
        customer_id: customer.id().to_string(),
        order_id,
    };
    one(
        version,
        state
            .downstreams
            .orders()
            .get_order(&correlation, message)
            .await?,
    )
}

/// State-setting update: `{"status": "CANCELLED"}` cancels (again: 200).
#[utoipa::path(put, path = "/orders/{orderId}", tag = "Orders", security(("BFFToken" = [])),
    params(("orderId" = String, Path, description = "Order id")), request_body = StatusBody,
    responses(
        (status = 200, description = "The cancelled order", body = OrderV2),
        (status = 404, description = "No such order of the caller's", body = ErrorBody),
        (status = 409, description = "INVALID_STATE_TRANSITION: the order has shipped or been delivered", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: status missing, unknown, or one a customer cannot set", body = ErrorBody),
    ))]
pub async fn update_order(
    State(state): State<AppState>,
    correlation: CallContext,
    version: ApiVersion,
    customer: Customer,
    Path(order_id): Path<String>,
    ApiJson(body): ApiJson<StatusBody>,
) -> Result<Response, ApiError> {
    let status = body
        .status
        .ok_or_else(|| ApiError::invalid_field("status", codes::REQUIRED, "status is required"))?;
    match parse_status(&status) {
        Some(OrderStatus::Cancelled) => {}
        Some(_) => {
            return Err(ApiError::invalid_field(
                "status",
                codes::INVALID_VALUE,
                "customers may only set status CANCELLED",
            ));
        }
        None => {
            return Err(ApiError::invalid_field(
                "status",
                codes::INVALID_VALUE,
                "unknown status",
            ));
        }
    }
    let message = CancelOrderRequest {
        customer_id: customer.id().to_string(),
        order_id,
    };
    one(
        version,
        state
            .downstreams
            .orders()
            .cancel_order(&correlation, message)
            .await?,
    )
}
