//! Merchandising sets the shop's markets whole (docs/markets.md).

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use storefront_domain::markets::MarketSet;
use storefront_proto::cart::v1::SetMarketsRequest;

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;

/// Replaces the shop's markets: `{"markets": [...]}` (docs/markets.md),
/// checked whole. Every cart replica takes up the new set within a second.
#[utoipa::path(put, path = "/internal/markets", tag = "Markets", security(("BearerAuth" = [])),
    request_body(content = MarketSet, description = "The whole set: {\"markets\": [...]} (the file form, MARKETS_FILE, may also be YAML)"),
    responses(
        (status = 200, description = "Set: the markets as every replica now has them", body = MarketSet),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `markets`", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, nothing changed: one entry per problem, named by its path (`markets[2].tax.rates[0].rate`: must be between 0 and 1; a duplicate id; a currency without minorUnits; a country sold in one currency by two markets; a shipping method without a price in each of its market's currencies)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn set_markets(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    ApiJson(document): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> Result<impl IntoResponse, ApiError> {
    let document = serde_json::to_vec(&document).map_err(|_| ApiError::internal())?;
    let reply = state
        .downstreams
        .cart()
        .set_markets(&correlation, SetMarketsRequest { document })
        .await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], reply.json))
}
