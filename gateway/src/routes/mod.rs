//! REST routes per resource group, assembled with their OpenAPI description.

pub mod addresses;
pub mod auth;
pub mod carts;
pub mod categories;
pub mod checkout;
pub mod collections;
pub mod content;
pub mod customers;
pub mod health;
pub mod markets;
pub mod orders;
pub mod params;
pub mod payments;
pub mod products;
pub mod promotions;
pub mod search;
pub mod sessions;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::middleware::caching::caching;
use crate::policy::CachePolicies;
use crate::state::AppState;

/// Every documented route; the OpenAPI document is generated from these.
/// What the edge does around them (caching here, the version, rate-limit
/// and deadline layers around the whole app) is their [`crate::policy`].
pub fn api(cache: &CachePolicies) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(catalog())
        .routes(routes!(search::search))
        .routes(routes!(search::suggestions))
        .routes(routes!(content::footer))
        .routes(routes!(content::page))
        .routes(routes!(content::banners))
        .routes(routes!(health::live))
        .routes(routes!(health::ready))
        .routes(routes!(crate::reference::public_page))
        .routes(routes!(crate::reference::script))
        .routes(routes!(crate::reference::root))
        .routes(routes!(crate::demo_media::demo_picture))
        .routes(routes!(payments::payment_webhook))
        .routes(routes!(payments::test_authenticate))
        .merge(customer())
        .layer(axum::middleware::from_fn_with_state(*cache, caching))
}

/// The public catalog: products, categories, collections, promotions,
/// markets.
fn catalog() -> OpenApiRouter<AppState> {
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
        .routes(routes!(promotions::list_promotions))
        .routes(routes!(markets::list_markets))
}

/// Routes whose answers belong to one customer.
fn customer() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(auth::login))
        .routes(routes!(auth::guest))
        .routes(routes!(auth::token))
        .routes(routes!(auth::logout))
        .routes(routes!(customers::sign_up))
        .routes(routes!(customers::get_customer, customers::update_customer))
        .routes(routes!(
            customers::get_preferences,
            customers::update_preferences
        ))
        .routes(routes!(
            addresses::list_addresses,
            addresses::create_address
        ))
        .routes(routes!(
            addresses::get_address,
            addresses::replace_address,
            addresses::delete_address
        ))
        .routes(routes!(sessions::list_sessions))
        .routes(routes!(sessions::end_session))
        .routes(routes!(sessions::change_password))
        .routes(routes!(carts::create_cart))
        .routes(routes!(
            carts::get_cart,
            carts::delete_cart,
            carts::update_cart
        ))
        .routes(routes!(carts::add_line_item))
        .routes(routes!(carts::update_line_item, carts::remove_line_item))
        .routes(routes!(checkout::create_checkout))
        .routes(routes!(checkout::get_checkout, checkout::update_checkout))
        .routes(routes!(checkout::confirm_checkout))
        .routes(routes!(checkout::extend_checkout))
        .routes(routes!(payments::pay_checkout))
        .routes(routes!(orders::list_orders))
        .routes(routes!(orders::customer_orders))
        .routes(routes!(orders::get_order, orders::update_order))
}
