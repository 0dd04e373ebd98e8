//! Fulfilment moves orders along, and reconciles with the order stream.

use axum::Json;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use storefront_proto::error::codes;
use storefront_proto::orders::v1::{AdvanceOrderRequest, ListOrderUpdatesRequest};
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Schema, Type};

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::orders::{OrderUpdates, OrderV2, StatusBody, parse_status};
use crate::query::schema::optional_query;
use crate::query::{feed_limit, invalid_parameter, timestamp};

/// Fulfilment: PROCESSING, SHIPPED, DELIVERED, one step at a time.
#[utoipa::path(put, path = "/internal/orders/{orderId}/status", tag = "Orders", security(("BearerAuth" = [])),
    params(("orderId" = String, Path, description = "Order id")), request_body = StatusBody,
    responses(
        (status = 200, description = "The order, moved on", body = OrderV2),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `status`", body = ErrorBody),
        (status = 404, description = "No such order", body = ErrorBody),
        (status = 409, description = "INVALID_STATE_TRANSITION", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: status missing or unknown", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn set_status(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Path(order_id): Path<String>,
    ApiJson(body): ApiJson<StatusBody>,
) -> Result<Json<OrderV2>, ApiError> {
    let invalid = |code: &str, message: &str| ApiError::invalid_field("status", code, message);
    let status = body
        .status
        .ok_or_else(|| invalid(codes::REQUIRED, "status is required"))?;
    let status =
        parse_status(&status).ok_or_else(|| invalid(codes::INVALID_VALUE, "unknown status"))?;
    let message = AdvanceOrderRequest {
        order_id,
        status: status as i32,
    };
    Ok(Json(OrderV2::try_from(
        state
            .downstreams
            .orders()
            .advance_order(&correlation, message)
            .await?,
    )?))
}

/// The query of `GET /internal/orders`, validated into the request the
/// orders service reads; documented from the same place.
pub struct UpdatesQuery(ListOrderUpdatesRequest);

impl<S: Send + Sync> FromRequestParts<S> for UpdatesQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        updates_request(parts.uri.query()).map(UpdatesQuery)
    }
}

impl IntoParams for UpdatesQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let text = |pattern: Option<&str>| {
            let schema = ObjectBuilder::new().schema_type(Type::String);
            schema.pattern(pattern.map(str::to_string)).into()
        };
        let limit = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(100))
            .default(Some(20.into()));
        [
            (
                "status",
                "Only orders in this status now.",
                text(Some(STATUSES)),
            ),
            (
                "updatedSince",
                "Only orders changed at or after this time (RFC 3339 or a date).",
                text(None),
            ),
            (
                "cursor",
                "The `nextCursor` of the previous page (then `updatedSince` is not read).",
                text(None),
            ),
            (
                "limit",
                "Orders to answer, 1 to 100 (default 20).",
                limit.into(),
            ),
        ]
        .into_iter()
        .map(|(name, description, schema): (&str, &str, Schema)| {
            optional_query(name, description, schema).build()
        })
        .collect()
    }
}

const STATUSES: &str = "^(CONFIRMED|PROCESSING|SHIPPED|DELIVERED|CANCELLED)$";

fn updates_request(raw: Option<&str>) -> Result<ListOrderUpdatesRequest, ApiError> {
    let mut request = ListOrderUpdatesRequest::default();
    for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "status" => {
                let status = parse_status(&value).ok_or_else(|| {
                    invalid_parameter("status", codes::INVALID_VALUE, "unknown status".into())
                })?;
                request.status = status as i32;
            }
            "updatedSince" => {
                let since = timestamp(&value).ok_or_else(|| {
                    let message = "expected an RFC 3339 timestamp or a date".to_string();
                    invalid_parameter("updatedSince", codes::INVALID_FORMAT, message)
                })?;
                request.updated_since = Some(since);
            }
            "cursor" => request.cursor = value.into_owned(),
            "limit" => request.limit = feed_limit(&value)?,
            _ => {}
        }
    }
    Ok(request)
}

/// Every customer's orders by when they last changed, for the back office
/// to reconcile with the order stream (`sf:order-events`).
#[utoipa::path(get, path = "/internal/orders", tag = "Orders", security(("BearerAuth" = [])),
    params(UpdatesQuery),
    responses(
        (status = 200, description = "A page of orders, oldest change first", body = OrderUpdates),
        (status = 400, description = "INVALID_QUERY_PARAMETER, or INVALID_CURSOR: a cursor this service did not give", body = ErrorBody),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `orders`", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn updates(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    UpdatesQuery(request): UpdatesQuery,
) -> Result<Json<OrderUpdates>, ApiError> {
    let page = state
        .downstreams
        .orders()
        .list_order_updates(&correlation, request)
        .await?;
    Ok(Json(OrderUpdates::try_from(page)?))
}
