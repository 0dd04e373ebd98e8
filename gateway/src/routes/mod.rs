//! REST routes per resource group, assembled with their OpenAPI description.

pub mod categories;
pub mod collections;
pub mod health;
pub mod products;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::state::AppState;

/// Every documented route; the OpenAPI document is generated from these.
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(products::list_products))
        .routes(routes!(products::get_product))
        .routes(routes!(products::list_variants))
        .routes(routes!(products::get_variant))
        .routes(routes!(products::list_media))
        .routes(routes!(categories::list_categories))
        .routes(routes!(categories::category_tree))
        .routes(routes!(categories::get_category))
        .routes(routes!(collections::list_collections))
        .routes(routes!(collections::get_collection))
        .routes(routes!(health::live))
        .routes(routes!(health::ready))
}

/// The value of a single query parameter, for endpoints that are not
/// collections (`currency` on product detail).
pub fn single_param(raw: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .last()
}
