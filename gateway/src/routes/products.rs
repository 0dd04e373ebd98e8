//! Products, their variants and media (public).

use axum::Json;
use axum::extract::{Path, State};
use storefront_proto::catalog::v1::{GetProductRequest, ListProductsRequest};
use storefront_proto::common::v1::PageRequest;

use super::params::{Currency, LocaleProjection};
use crate::downstream::summaries::Source;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::catalog::{Media, Product, Variant};
use crate::model::common::Paged;
use crate::query::{Listing, Products, SubCollection};
use crate::state::AppState;
use crate::transcode::{self, JsonBytes};

/// Lists products, filtered, sorted and paged.
#[utoipa::path(get, path = "/products", tag = "Products", params(Listing<Products>, Currency, LocaleProjection),
    responses(
        (status = 200, description = "A page of product summaries (no `variants`)", body = Paged<Product>),
        (status = 400, description = "INVALID_QUERY_PARAMETER, INVALID_SORT_FIELD, INVALID_FILTER or INVALID_API_VERSION", body = ErrorBody),
    ))]
pub async fn list_products(
    State(state): State<AppState>,
    correlation: CallContext,
    Listing(parsed, _): Listing<Products>,
    Currency(currency_code): Currency,
    LocaleProjection(locale): LocaleProjection,
) -> Result<JsonBytes, ApiError> {
    let (downstreams, ctx) = (&state.downstreams, &correlation);
    let ask = |compressed| {
        let message = ListProductsRequest {
            query: Some(parsed.list.clone()),
            currency_code: currency_code.clone(),
            compressed,
        };
        async move { downstreams.catalog().list_products(ctx, message).await }
    };
    // Compressed when the gateway keeps products' JSON: then most of a
    // page's products are never decompressed at all.
    let compressed = state.product_json.holds();
    let asked = (Source::Catalog, compressed);
    let answer = state.summaries.ask(downstreams, ctx, asked, ask).await?;
    transcode::paged(
        answer.reply.page,
        &answer.reply.products,
        answer.compressed(),
        locale.as_deref(),
        &state.product_json,
    )
}

async fn fetch_product(
    state: &AppState,
    correlation: &CallContext,
    product_id: String,
    currency_code: String,
) -> Result<Product, ApiError> {
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
    params(("productId" = String, Path, description = "Product id"), Currency, LocaleProjection),
    responses(
        (status = 200, description = "The product", body = Product),
        (status = 400, description = "Invalid currency", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn get_product(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    Currency(currency): Currency,
    LocaleProjection(locale): LocaleProjection,
) -> Result<Json<Product>, ApiError> {
    let mut product = fetch_product(&state, &correlation, product_id, currency).await?;
    if let Some(locale) = locale {
        product.project(&locale);
    }
    Ok(Json(product))
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
    params(("productId" = String, Path, description = "Product id"), Listing<SubCollection>, Currency),
    responses(
        (status = 200, description = "A page of variants", body = Paged<Variant>),
        (status = 400, description = "Invalid limit or offset", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn list_variants(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    Listing(parsed, _): Listing<SubCollection>,
    Currency(currency): Currency,
) -> Result<Json<Paged<Variant>>, ApiError> {
    let product = fetch_product(&state, &correlation, product_id, currency).await?;
    let page = parsed.list.page.unwrap_or_default();
    Ok(Json(page_of(product.variants.unwrap_or_default(), page)))
}

/// One variant of a product.
#[utoipa::path(get, path = "/products/{productId}/variants/{variantId}", tag = "Products",
    params(
        ("productId" = String, Path, description = "Product id"),
        ("variantId" = u32, Path, description = "Variant id, unique within the product"),
        Currency,
    ),
    responses(
        (status = 200, description = "The variant", body = Variant),
        (status = 404, description = "No such product or variant", body = ErrorBody),
    ))]
pub async fn get_variant(
    State(state): State<AppState>,
    correlation: CallContext,
    Path((product_id, variant_id)): Path<(String, String)>,
    Currency(currency): Currency,
) -> Result<Json<Variant>, ApiError> {
    let product = fetch_product(&state, &correlation, product_id, currency).await?;
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
    params(("productId" = String, Path, description = "Product id"), Listing<SubCollection>),
    responses(
        (status = 200, description = "A page of media, in position order", body = Paged<Media>),
        (status = 400, description = "Invalid limit or offset", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
    ))]
pub async fn list_media(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(product_id): Path<String>,
    Listing(parsed, _): Listing<SubCollection>,
) -> Result<Json<Paged<Media>>, ApiError> {
    let page = parsed.list.page.unwrap_or_default();
    let product = fetch_product(&state, &correlation, product_id, String::new()).await?;
    Ok(Json(page_of(product.media, page)))
}
