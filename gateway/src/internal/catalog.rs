//! Merchandising changes the catalog (docs/feed.md is the format of every
//! product record here): a product put or deleted, stock levels, a whole
//! feed imported (or checked), the catalog exported. Each change is one
//! new catalog version, whole or not at all; listings and detail show it
//! at once, search within 2 seconds.

use std::time::Duration;
use storefront_proto::error::codes;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use storefront_platform::client::call::CallScope;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    ChangeReply, DeleteProductRequest, FeedChunk, ImportReply, PutProductRequest, SetStockRequest,
    StockLevel, stock_level,
};
use utoipa::{IntoParams, ToSchema};

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::bounded::Id;

/// How long an import or export may take.
pub(super) const FEED_DEADLINE: Duration = Duration::from_secs(30 * 60);
/// Stock changes one request may carry.
const MAX_STOCK_CHANGES: usize = 10_000;

/// A new catalog version, and the products as they are now, each as its
/// feed record.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogChange {
    pub catalog_version: u64,
    // The catalog's own JSON of each record, checked and passed on as it
    // is (not parsed into a tree and written again).
    #[schema(value_type = Vec<Object>)]
    pub products: Vec<Box<serde_json::value::RawValue>>,
}

fn change(reply: ChangeReply) -> Result<Json<CatalogChange>, ApiError> {
    let products = reply
        .records
        .iter()
        .map(|r| serde_json::from_slice(r))
        .collect::<Result<_, _>>()
        .map_err(ApiError::bad_gateway)?;
    Ok(Json(CatalogChange {
        catalog_version: reply.catalog_version,
        products,
    }))
}

/// Creates or replaces a product from its feed record.
#[utoipa::path(put, path = "/internal/catalog/products/{productId}", tag = "Catalog", security(("BearerAuth" = [])),
    params(("productId" = String, Path, description = "The product id; the record's `id` may be left out")),
    request_body(content = Object, description = "One product record of the feed (docs/feed.md; `type` optional). Its `version`, when given, is the version the product must be at now (409 otherwise); the stored product gets the next one"),
    responses(
        (status = 200, description = "Created or replaced: the new catalog version and the product's record as stored", body = CatalogChange),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `products`", body = ErrorBody),
        (status = 409, description = "CONCURRENT_MODIFICATION: `version` is not the product's", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: one entry per bad field of the record (a JSON path)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn put_product(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Path(product_id): Path<String>,
    ApiJson(record): ApiJson<serde_json::Map<String, serde_json::Value>>,
) -> Result<Json<CatalogChange>, ApiError> {
    let record = serde_json::to_vec(&record).map_err(|_| ApiError::internal())?;
    let message = PutProductRequest {
        product_id,
        record: record.into(),
    };
    let reply = state
        .downstreams
        .catalog()
        .put_product(&correlation, message)
        .await;
    state.tree.forget();
    change(reply?)
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Expected {
    /// The version the product must be at (409 otherwise).
    #[param(minimum = 1)]
    version: Option<i64>,
}

/// Deletes a product: it is gone from listings, detail, categories and
/// search; carts holding it answer LINE_UNAVAILABLE at checkout.
#[utoipa::path(delete, path = "/internal/catalog/products/{productId}", tag = "Catalog", security(("BearerAuth" = [])),
    params(("productId" = String, Path, description = "The product id"), Expected),
    responses(
        (status = 200, description = "Deleted: the new catalog version", body = CatalogChange),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `products`", body = ErrorBody),
        (status = 404, description = "No such product", body = ErrorBody),
        (status = 409, description = "CONCURRENT_MODIFICATION: `version` is not the product's", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn delete_product(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Path(product_id): Path<String>,
    Query(expected): Query<Expected>,
) -> Result<Json<CatalogChange>, ApiError> {
    let message = DeleteProductRequest {
        product_id,
        expected_version: expected.version,
    };
    let reply = state
        .downstreams
        .catalog()
        .delete_product(&correlation, message)
        .await;
    state.tree.forget();
    change(reply?)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockBody {
    /// Applied together: all of them or none. At most 10,000.
    #[schema(required = true)]
    pub changes: Option<Vec<StockChange>>,
}

/// One variant's stock: `quantity` (on hand now) or `delta` (added, or
/// taken when negative; the result may not go below 0).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StockChange {
    #[schema(required = true, value_type = Id)]
    pub sku: Option<Id>,
    #[schema(minimum = 0)]
    pub quantity: Option<u32>,
    pub delta: Option<i64>,
}

/// Sets stock levels by SKU, together. Requests that arrive while the
/// catalog writes a version share the next one (in the order they
/// arrived: of two setting one SKU, the later holds), and each answer is
/// that version.
#[utoipa::path(post, path = "/internal/catalog/stock", tag = "Catalog", security(("BearerAuth" = [])),
    request_body = StockBody,
    responses(
        (status = 200, description = "Applied: the new catalog version and the products whose stock changed, as records", body = CatalogChange),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `stock`", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, nothing applied: field `changes[i].sku` (unknown SKU), `changes[i].delta` (stock would go below 0), `changes[i]` (neither or both of quantity and delta)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn set_stock(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    ApiJson(body): ApiJson<StockBody>,
) -> Result<Json<CatalogChange>, ApiError> {
    let changes = body.changes.filter(|c| !c.is_empty()).ok_or_else(|| {
        ApiError::invalid_field("changes", codes::REQUIRED, "changes is required")
    })?;
    if changes.len() > MAX_STOCK_CHANGES {
        let message = format!("at most {MAX_STOCK_CHANGES} changes a request");
        return Err(ApiError::invalid_field(
            "changes",
            codes::OUT_OF_RANGE,
            message,
        ));
    }
    let mut levels = Vec::with_capacity(changes.len());
    for (i, c) in changes.into_iter().enumerate() {
        let sku = c.sku.map(Id::into_inner).ok_or_else(|| {
            ApiError::invalid_field(
                &format!("changes[{i}].sku"),
                codes::REQUIRED,
                "sku is required",
            )
        })?;
        let level = match (c.quantity, c.delta) {
            (Some(q), None) => stock_level::Level::Quantity(q),
            (None, Some(d)) => stock_level::Level::Delta(d),
            _ => {
                let message = "give exactly one of quantity and delta";
                return Err(ApiError::invalid_field(
                    &format!("changes[{i}]"),
                    codes::INVALID_VALUE,
                    message,
                ));
            }
        };
        levels.push(StockLevel {
            sku,
            level: Some(level),
        });
    }
    let message = SetStockRequest { changes: levels };
    change(
        state
            .downstreams
            .catalog()
            .set_stock(&correlation, message)
            .await?,
    )
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ImportParams {
    /// Check the feed and count what it would change; change nothing.
    #[serde(default)]
    dry_run: bool,
}

/// What an import did (or, a dry run, would do).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    pub applied: bool,
    /// The catalog version now (a new one when applied).
    pub catalog_version: u64,
    pub to_create: u64,
    /// Products in both the catalog and the feed whose record the feed
    /// changes (compared byte for byte, as encoded).
    pub to_update: u64,
    /// Products in both whose record the feed leaves exactly as it is.
    pub unchanged: u64,
    pub to_delete: u64,
}

/// 422 for a feed with problems: each one a field error at its line.
fn refused(reply: ImportReply) -> Response {
    let mut error = ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_FEED",
        format!(
            "the feed has {} problem(s), the first {} listed; nothing was applied",
            reply.error_count,
            reply.errors.len()
        ),
    );
    error.errors = reply
        .errors
        .into_iter()
        .map(|p| FieldError {
            field: format!("lines[{}].{}", p.line, p.field),
            code: codes::INVALID_VALUE.to_string(),
            message: p.message,
        })
        .collect();
    error.into_response()
}

/// Replaces the catalog with a whole feed, streamed as the body (NDJSON,
/// docs/feed.md): checked whole, then applied as one new catalog version,
/// or refused whole with every problem's line. `?dryRun=true` answers
/// what it would do and changes nothing.
#[utoipa::path(post, path = "/internal/catalog/import", tag = "Catalog", security(("BearerAuth" = [])),
    params(ImportParams),
    request_body(content = String, content_type = "application/x-ndjson", description = "The whole feed, streamed (at most 16 GiB)"),
    responses(
        (status = 200, description = "Applied (or, a dry run, checked): what changed", body = Imported),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `import`", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE: over CATALOG_IMPORT_MAX_BYTES (4 GiB by default)", body = ErrorBody),
        (status = 422, description = "INVALID_FEED: nothing applied; `errors` has the first 1,000 problems, field `lines[N].path` (the line and the record's field)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn import(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Query(params): Query<ImportParams>,
    body: Body,
) -> Response {
    let peer = &state.downstreams.catalog.caller.peer;
    let mut first = true;
    let chunks = body.into_data_stream().map(move |chunk| {
        let dry_run = std::mem::take(&mut first) && params.dry_run;
        // A body that breaks off ends the stream: the feed is then cut
        // short and its last line refused.
        FeedChunk {
            data: chunk.unwrap_or_default(),
            dry_run,
        }
    });
    let id = correlation.correlation();
    let request = match peer.request_with(id.as_ref(), chunks).await {
        Ok(mut r) => {
            r.set_timeout(FEED_DEADLINE);
            r
        }
        Err(e) => return ApiError::unavailable("catalog", e).into_response(),
    };
    let mut client = CatalogServiceClient::new(peer.long_running(FEED_DEADLINE))
        .max_decoding_message_size(64 << 20);
    let reply = client.import_feed(request).await;
    state.tree.forget();
    let reply = match reply {
        Ok(reply) => reply.into_inner(),
        Err(status) => return ApiError::from(status).into_response(),
    };
    if !reply.errors.is_empty() || reply.error_count > 0 {
        return refused(reply);
    }
    Json(Imported {
        applied: reply.applied,
        catalog_version: reply.catalog_version,
        to_create: reply.to_create,
        to_update: reply.to_update,
        unchanged: reply.unchanged,
        to_delete: reply.to_delete,
    })
    .into_response()
}
