//! Products, their variants and media (public).

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use storefront_proto::catalog::v1::{GetProductRequest, ListProductsRequest};
use storefront_proto::common::v1::PageRequest;
use utoipa::IntoParams;

use super::single_param;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::catalog::{Media, Product, Variant};
use crate::model::common::Paged;
use crate::query::{self, spec};
use crate::state::AppState;
use crate::transcode::{self, JsonBytes};

/// Query parameters of `GET /products`; its explicit filters (`brand`,
/// `minPrice`, ...) are written into the document from the vocabulary.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ProductListParams {
    /// Page size, 1 to 100.
    #[param(minimum = 1, maximum = 100, default = 20)]
    limit: Option<u32>,
    /// Results to skip.
    #[param(minimum = 0, default = 0)]
    offset: Option<u64>,
    /// `field:asc|desc`, repeatable, applied in order; fields: name, price, createdAt,
    /// popularity, featured, inStock, status, brand. Ties are broken by id.
    sort: Option<Vec<String>>,
    /// AUD (default) or NZD: the currency of `price` and of price filters and sorts.
    #[param(pattern = "^(AUD|NZD)$")]
    currency: Option<String>,
    /// `filter[<field>]=v` or `filter[<field>[<op>]]=v`, op one of eq, ne, gt, gte, lt, lte.
    /// Fields: name, price, createdAt, popularity, featured, status, inStock, category,
    /// brand, key. Booleans, status and category take eq and ne only.
    #[param(style = DeepObject, explode)]
    filter: Option<HashMap<String, String>>,
}

/// `limit` and `offset` of the small sub-collections.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageParams {
    #[param(minimum = 1, maximum = 100, default = 20)]
    limit: Option<u32>,
    #[param(minimum = 0, default = 0)]
    offset: Option<u64>,
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CurrencyParam {
    /// AUD (default) or NZD.
    #[param(pattern = "^(AUD|NZD)$")]
    currency: Option<String>,
}

/// Lists products, filtered, sorted and paged.
#[utoipa::path(get, path = "/products", tag = "Products", params(ProductListParams),
    responses(
        (status = 200, description = "A page of product summaries (no `variants`)", body = Paged<Product>),
        (status = 400, description = "INVALID_QUERY_PARAMETER, INVALID_SORT_FIELD, INVALID_FILTER or INVALID_API_VERSION", body = ErrorBody),
    ))]
pub async fn list_products(
    State(state): State<AppState>,
    correlation: CallContext,
    RawQuery(raw): RawQuery,
) -> Result<JsonBytes, ApiError> {
    let parsed = query::parse(raw.as_deref(), &spec::PRODUCTS)?;
    let currency_code = parsed.param("currency").unwrap_or_default().to_string();
    let message = ListProductsRequest {
        query: Some(parsed.list),
        currency_code,
    };
    let reply = state
        .downstreams
        .catalog()
        .list_products(&correlation, message)
        .await?;
    transcode::paged(reply.page, &reply.products)
}

async fn fetch_product(
    state: &AppState,
    correlation: &CallContext,
    product_id: String,
    raw: Option<&str>,
) -> Result<Product, ApiError> {
    let currency_code = single_param(raw, "currency").unwrap_or_default();
    let message = GetProductRequest {
        product_id,
        currency_code,
    };
    let product = state
        .downstreams
        .catalog()
        .get_product(correlation, message)
        .await?;
    Product::from_proto(product, true)
}

/// A product with all its variants.
#[utoipa::path(get, path = "/products/{productId}", tag = "Products",
    params(("productId" = String, Path, description = "Product id"), CurrencyParam),
    responses(
        (status = 200, description = "The product", body = Product),
        (status = 400, description = "Invalid currency", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn get_product(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Product>, ApiError> {
    Ok(Json(
        fetch_product(&state, &correlation, product_id, raw.as_deref()).await?,
    ))
}

/// The `limit`/`offset` of a small list the gateway pages itself.
pub fn sub_page(raw: Option<&str>) -> Result<PageRequest, ApiError> {
    Ok(query::parse(raw, &spec::SUB_COLLECTION)?
        .list
        .page
        .unwrap_or_default())
}

/// Pages a list held in full (variants, media).
pub fn page_of<T: utoipa::ToSchema>(items: Vec<T>, page: PageRequest) -> Paged<T> {
    let total = items.len() as u64;
    let start = usize::try_from(page.offset)
        .unwrap_or(usize::MAX)
        .min(items.len());
    let results: Vec<T> = items
        .into_iter()
        .skip(start)
        .take(page.limit as usize)
        .collect();
    let count = results.len() as u32;
    Paged {
        limit: page.limit,
        offset: page.offset,
        count,
        total,
        results,
    }
}

/// The variants of a product.
#[utoipa::path(get, path = "/products/{productId}/variants", tag = "Products",
    params(("productId" = String, Path, description = "Product id"), PageParams, CurrencyParam),
    responses(
        (status = 200, description = "A page of variants", body = Paged<Variant>),
        (status = 400, description = "Invalid limit or offset", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn list_variants(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Paged<Variant>>, ApiError> {
    let page = sub_page(raw.as_deref())?;
    let product = fetch_product(&state, &correlation, product_id, raw.as_deref()).await?;
    Ok(Json(page_of(product.variants.unwrap_or_default(), page)))
}

/// One variant of a product.
#[utoipa::path(get, path = "/products/{productId}/variants/{variantId}", tag = "Products",
    params(
        ("productId" = String, Path, description = "Product id"),
        ("variantId" = u32, Path, description = "Variant id, unique within the product"),
        CurrencyParam,
    ),
    responses(
        (status = 200, description = "The variant", body = Variant),
        (status = 404, description = "No such product or variant", body = ErrorBody),
    ))]
pub async fn get_variant(
    State(state): State<AppState>,
    correlation: CallContext,
    Path((product_id, variant_id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Variant>, ApiError> {
    let product = fetch_product(&state, &correlation, product_id, raw.as_deref()).await?;
    let wanted: Option<u32> = variant_id.parse().ok();
    product
        .variants
        .unwrap_or_default()
        .into_iter()
        .find(|v| Some(v.id) == wanted)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("variant '{variant_id}' does not exist")))
}

/// The media of a product.
#[utoipa::path(get, path = "/products/{productId}/media", tag = "Products",
    params(("productId" = String, Path, description = "Product id"), PageParams),
    responses(
        (status = 200, description = "A page of media, in position order", body = Paged<Media>),
        (status = 400, description = "Invalid limit or offset", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn list_media(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Paged<Media>>, ApiError> {
    let page = sub_page(raw.as_deref())?;
    let product = fetch_product(&state, &correlation, product_id, None).await?;
    Ok(Json(page_of(product.media, page)))
}
