//! `GET /internal/catalog/export`: the catalog as the shop's feed, or as
//! one market's product feed for agents (docs/agents.md), streamed from
//! the catalog service.

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use storefront_platform::client::call::CallScope;
use storefront_proto::catalog::v1::ExportFeedRequest;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::error::codes;
use utoipa::IntoParams;

use super::catalog::FEED_DEADLINE;
use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;

/// What `GET /internal/catalog/export` writes.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `feed` (the default): the shop's feed (NDJSON, docs/feed.md);
    /// `acp`: one market's Agentic Commerce Protocol product feed (JSON,
    /// docs/agents.md), with `market`.
    format: Option<String>,
    /// With `acp`: the market's id (`GET /markets`).
    market: Option<String>,
}

/// The catalog as a feed (NDJSON, docs/feed.md), or as one market's
/// product feed for agents, streamed from one version.
#[utoipa::path(get, path = "/internal/catalog/export", tag = "Catalog", security(("BearerAuth" = [])),
    params(ExportQuery),
    responses(
        (status = 200, description = "The feed (application/x-ndjson); with format=acp, `{\"products\": [...]}` as the protocol's ProductsResponse (application/json): active products with a price in the market's currency, each variant's id the facade's item id `{productId}:{variantId}`, its availability what anyone may buy now, its page at `ACP_PRODUCT_URL`", content_type = "application/x-ndjson", body = String),
        (status = 400, description = "INVALID_QUERY_PARAMETER: format is feed or acp; acp needs the id of one of the shop's markets", body = ErrorBody),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `export`", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn export(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Query(query): Query<ExportQuery>,
) -> Response {
    let (message, media_type) = match export_request(&state, &correlation, query).await {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let peer = &state.downstreams.catalog.caller.peer;
    let id = correlation.correlation();
    let request = match peer.request_with(id.as_ref(), message).await {
        Ok(mut r) => {
            r.set_timeout(FEED_DEADLINE);
            r
        }
        Err(e) => return ApiError::unavailable("catalog", e).into_response(),
    };
    let mut client = CatalogServiceClient::new(peer.long_running(FEED_DEADLINE));
    let stream = match client.export_feed(request).await {
        Ok(reply) => reply.into_inner(),
        Err(status) => return ApiError::from(status).into_response(),
    };
    let body = Body::from_stream(stream.map(|chunk| chunk.map(|c| c.data)));
    ([(header::CONTENT_TYPE, media_type)], body).into_response()
}

/// The catalog's request for `query`, and the answer's media type.
async fn export_request(
    state: &InternalState,
    correlation: &CallContext,
    query: ExportQuery,
) -> Result<(ExportFeedRequest, &'static str), ApiError> {
    let bad = |message: String| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "INVALID_QUERY_PARAMETER",
            message.clone(),
        )
        .field("format", codes::INVALID_VALUE, message)
    };
    match (query.format.as_deref().unwrap_or("feed"), query.market) {
        ("feed", None) => Ok((ExportFeedRequest::default(), "application/x-ndjson")),
        ("acp", Some(id)) => {
            let set = crate::acp::markets(&state.downstreams, correlation).await?;
            let market = set
                .market(&id)
                .map_err(|ids| bad(format!("market is one of {ids}")))?;
            let (currency, locale) = market.feed_view();
            let message = ExportFeedRequest {
                format: "acp".into(),
                currency,
                locale,
                product_url: state.product_url.to_string(),
            };
            Ok((message, "application/json"))
        }
        _ => Err(bad(
            "format is feed (the default), or acp with market".into()
        )),
    }
}
