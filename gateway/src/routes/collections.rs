//! Merchandised collections (public).

use axum::Json;
use axum::extract::{Path, State};
use storefront_proto::catalog::v1::{GetCollectionRequest, ListCollectionsRequest};

use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::catalog::Collection;
use crate::model::common::Paged;
use crate::query::{Collections, Listing};
use crate::state::AppState;

/// Lists collections.
#[utoipa::path(get, path = "/collections", tag = "Categories",
    params(Listing<Collections>),
    responses(
        (status = 200, description = "A page of collections", body = Paged<Collection>),
        (status = 400, description = "INVALID_QUERY_PARAMETER or INVALID_SORT_FIELD", body = ErrorBody),
    ))]
pub async fn list_collections(
    State(state): State<AppState>,
    correlation: CallContext,
    Listing(parsed, _): Listing<Collections>,
) -> Result<Json<Paged<Collection>>, ApiError> {
    let ds = &state.downstreams;
    let reply = ds
        .catalog()
        .list_collections(
            &correlation,
            ListCollectionsRequest {
                query: Some(parsed.list),
            },
        )
        .await?;
    let results = reply
        .collections
        .into_iter()
        .map(Collection::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Json(Paged::new(reply.page, results)?))
}

/// One collection with its product ids.
#[utoipa::path(get, path = "/collections/{collectionId}", tag = "Categories",
    params(("collectionId" = String, Path, description = "Collection id")),
    responses(
        (status = 200, description = "The collection", body = Collection),
        (status = 404, description = "No such collection", body = ErrorBody),
    ))]
pub async fn get_collection(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(collection_id): Path<String>,
) -> Result<Json<Collection>, ApiError> {
    let ds = &state.downstreams;
    let reply = ds
        .catalog()
        .get_collection(&correlation, GetCollectionRequest { collection_id })
        .await?;
    Ok(Json(Collection::try_from(reply)?))
}
