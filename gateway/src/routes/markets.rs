//! The shop's markets (public): where it sells, in which currencies, with
//! which tax and shipping methods (docs/markets.md).

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use storefront_domain::markets::MarketSet;
use storefront_proto::cart::v1::GetMarketsRequest;

use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::state::AppState;

/// Every market the shop sells in: its currencies with their minor units,
/// countries, locales, whether prices include tax, its tax rates and its
/// shipping methods. The same for every shopper (cacheable); a change on
/// the internal port shows within a second.
#[utoipa::path(get, path = "/markets", tag = "Markets",
    responses(
        (status = 200, description = "The shop's markets, as `MARKETS_FILE` or `PUT /internal/markets` set them (none in production and staging until set)", body = MarketSet),
    ))]
pub async fn list_markets(
    State(state): State<AppState>,
    correlation: CallContext,
) -> Result<impl IntoResponse, ApiError> {
    let reply = state
        .downstreams
        .cart()
        .get_markets(&correlation, GetMarketsRequest {})
        .await?;
    // The cart service's own JSON of the set it checked: served as it is.
    Ok(([(header::CONTENT_TYPE, "application/json")], reply.json))
}
