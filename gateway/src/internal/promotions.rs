//! Merchandising sets the shop's promotions whole.

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use storefront_proto::cart::v1::SetPromotionsRequest;
use utoipa::ToSchema;

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;

#[derive(Debug, Serialize, ToSchema)]
pub struct PromotionsSet {
    /// How many promotions the shop has now.
    pub promotions: u32,
}

/// Replaces the shop's promotions: `{"promotions": [...]}`, each in the
/// public JSON of `GET /promotions` (`id`, `key`, `name`, `codes`, `type`
/// percentage or fixedAmount, `basisPoints` or `amounts`,
/// `minimumSubtotals`, `categoryIds`, `productIds`, `startsAt`, `endsAt`,
/// `stackable`). Every cart replica prices with the new set within a
/// second; a cart holding a code that is gone loses it at checkout
/// (an open checkout answers 409 `CART_REPRICED` at confirm).
#[utoipa::path(put, path = "/internal/promotions", tag = "Promotions", security(("BearerAuth" = [])),
    request_body(content = Object, description = "The whole set: {\"promotions\": [...]}, at most 1,000"),
    responses(
        (status = 200, description = "Set", body = PromotionsSet),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `promotions`", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, nothing changed: one entry per bad field (`promotions[i].codes[j]`: a code another promotion has, ...)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn set_promotions(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    ApiJson(document): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> Result<Json<PromotionsSet>, ApiError> {
    let document = serde_json::to_vec(&document).map_err(|_| ApiError::internal())?;
    let message = SetPromotionsRequest { document };
    let reply = state
        .downstreams
        .cart()
        .set_promotions(&correlation, message)
        .await?;
    Ok(Json(PromotionsSet {
        promotions: reply.promotions,
    }))
}
