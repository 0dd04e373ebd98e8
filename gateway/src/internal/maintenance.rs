//! Operations: rebuild the search index, reload the content files. Both
//! are costly: each caller may run each at most once per
//! `RATE_LIMIT_MAINTENANCE` (one per 10 s by default), shared by every
//! replica through Redis; sooner is 429.

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use storefront_proto::content::v1::ReloadRequest as ContentReload;
use storefront_proto::search::v1::ReindexRequest;
use utoipa::ToSchema;

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::ratelimit::Scope;
use crate::ratelimit::middleware::too_many;

async fn cool_down(
    state: &InternalState,
    caller: &ServiceCaller,
    route: &str,
) -> Result<(), Response> {
    let key = format!("{}:{route}", caller.0);
    match state.limiter.check(Scope::Maintenance, &key).await {
        Some(decision) if !decision.allowed => Err(too_many(&[decision])),
        _ => Ok(()),
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reindexed {
    pub catalog_version: u64,
    pub documents: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Reloaded {
    pub documents: u64,
}

/// Rebuilds the search index from the catalog now: the replica this call
/// reaches at once (its counts answered), every other search replica at its
/// next follow of the catalog (within about a second).
#[utoipa::path(post, path = "/internal/search/reindex", tag = "Maintenance", security(("BearerAuth" = [])),
    responses(
        (status = 200, description = "Rebuilt", body = Reindexed),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `reindex`", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: RATE_LIMIT_SERVICE, or sooner than RATE_LIMIT_MAINTENANCE after the last run; see Retry-After", body = ErrorBody),
    ))]
pub async fn reindex(
    State(state): State<InternalState>,
    correlation: CallContext,
    caller: ServiceCaller,
) -> Result<Json<Reindexed>, Response> {
    cool_down(&state, &caller, "reindex").await?;
    let reply = state
        .downstreams
        .search()
        .reindex(&correlation, ReindexRequest {})
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
    Ok(Json(Reindexed {
        catalog_version: reply.catalog_version,
        documents: reply.documents,
    }))
}

/// Reloads the content files.
#[utoipa::path(post, path = "/internal/content/reload", tag = "Maintenance", security(("BearerAuth" = [])),
    responses(
        (status = 200, description = "Reloaded", body = Reloaded),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `reload`", body = ErrorBody),
        (status = 422, description = "INVALID_CONTENT: the files are refused, the last good content stays", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: RATE_LIMIT_SERVICE, or sooner than RATE_LIMIT_MAINTENANCE after the last run; see Retry-After", body = ErrorBody),
    ))]
pub async fn reload_content(
    State(state): State<InternalState>,
    correlation: CallContext,
    caller: ServiceCaller,
) -> Result<Json<Reloaded>, Response> {
    cool_down(&state, &caller, "reload").await?;
    let reply = state
        .downstreams
        .content()
        .reload(&correlation, ContentReload {})
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
    Ok(Json(Reloaded {
        documents: reply.documents,
    }))
}
