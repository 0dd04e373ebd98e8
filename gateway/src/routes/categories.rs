//! Categories and the navigation tree (public).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use storefront_proto::catalog::v1::{
    GetCategoryRequest, GetCategoryTreeRequest, ListCategoriesRequest,
};

use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::catalog::{Category, CategoryNode, CategoryTree};
use crate::model::common::Paged;
use crate::query::{Categories, Listing};
use crate::state::AppState;

/// Lists categories of every level.
#[utoipa::path(get, path = "/categories", tag = "Categories",
    params(Listing<Categories>),
    responses(
        (status = 200, description = "A page of categories", body = Paged<Category>),
        (status = 400, description = "INVALID_QUERY_PARAMETER or INVALID_SORT_FIELD", body = ErrorBody),
    ))]
pub async fn list_categories(
    State(state): State<AppState>,
    correlation: CallContext,
    Listing(parsed, _): Listing<Categories>,
) -> Result<Json<Paged<Category>>, ApiError> {
    let ds = &state.downstreams;
    let reply = ds
        .catalog()
        .list_categories(
            &correlation,
            ListCategoriesRequest {
                query: Some(parsed.list),
            },
        )
        .await?;
    let results = reply
        .categories
        .into_iter()
        .map(Category::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Json(Paged::new(reply.page, results)?))
}

/// The whole category tree, for navigation menus.
#[utoipa::path(get, path = "/categories/tree", tag = "Categories",
    responses((status = 200, description = "Roots with their descendants, in position order. One document each gateway holds: read from the catalog at most once a second, so a change is served within a second (at once by the gateway it was made through)", body = CategoryTree)))]
pub async fn category_tree(
    State(state): State<AppState>,
    correlation: CallContext,
) -> Result<Response, ApiError> {
    let read = || async {
        let tree = state
            .downstreams
            .catalog()
            .get_category_tree(&correlation, GetCategoryTreeRequest {})
            .await?;
        let roots = tree
            .roots
            .into_iter()
            .map(CategoryNode::try_from)
            .collect::<Result<_, _>>()?;
        let json = serde_json::to_vec(&CategoryTree { roots }).map_err(|_| ApiError::internal())?;
        Ok(Bytes::from(json))
    };
    let json = state.tree.json(read).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

/// One category with its ancestors.
#[utoipa::path(get, path = "/categories/{categoryId}", tag = "Categories",
    params(("categoryId" = String, Path, description = "Category id")),
    responses(
        (status = 200, description = "The category", body = Category),
        (status = 404, description = "No such category", body = ErrorBody),
    ))]
pub async fn get_category(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(category_id): Path<String>,
) -> Result<Json<Category>, ApiError> {
    let ds = &state.downstreams;
    let reply = ds
        .catalog()
        .get_category(&correlation, GetCategoryRequest { category_id })
        .await?;
    Ok(Json(Category::try_from(reply)?))
}
