//! Active promotions and their rules (public).

use axum::Json;
use axum::extract::State;
use storefront_proto::cart::v1::ListPromotionsRequest;
use storefront_proto::error::codes;

use super::products::page_of;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::cart::Promotion;
use crate::model::common::Paged;
use crate::query::{Listing, SubCollection};
use crate::state::AppState;

/// Promotions running now, with their codes and rules.
#[utoipa::path(get, path = "/promotions", tag = "Cart", params(Listing<SubCollection>),
    responses(
        (status = 200, description = "A page of active promotions", body = Paged<Promotion>),
        (status = 400, description = codes::INVALID_QUERY_PARAMETER, body = ErrorBody),
    ))]
pub async fn list_promotions(
    State(state): State<AppState>,
    correlation: CallContext,
    Listing(parsed, _): Listing<SubCollection>,
) -> Result<Json<Paged<Promotion>>, ApiError> {
    let page = parsed.list.page.unwrap_or_default();
    let ds = &state.downstreams;
    let reply = ds
        .cart()
        .list_promotions(&correlation, ListPromotionsRequest {})
        .await?;
    let promotions = reply.promotions;
    Ok(Json(page_of(
        promotions.into_iter().map(Promotion::from).collect(),
        page,
    )))
}
