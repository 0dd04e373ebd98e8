//! Fulfilment moves orders along.

use axum::Json;
use axum::extract::{Path, State};
use storefront_proto::orders::v1::AdvanceOrderRequest;

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::orders::{OrderV2, StatusBody, parse_status};

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
        .ok_or_else(|| invalid("REQUIRED", "status is required"))?;
    let status = parse_status(&status).ok_or_else(|| invalid("INVALID_VALUE", "unknown status"))?;
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
