//! The calls the cart service makes, each with its retry policy, through
//! the mesh's one call path (breaker, retries, correlation id).

use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    GetProductRequest, GetProductsRequest, GetProductsResponse, Product,
};
use storefront_proto::catalog::v1::{ListCategoriesRequest, ListCategoriesResponse};
use storefront_proto::orders::v1::order_service_client::OrderServiceClient;
use storefront_proto::orders::v1::{CreateOrderRequest, Order};

typed_client! {
    /// Prices and stock of the products in carts; category ids for promotions.
    pub Catalog via CatalogServiceClient {
        Read get_product(GetProductRequest) -> Product;
        Read get_products(GetProductsRequest) -> GetProductsResponse;
        Read list_categories(ListCategoriesRequest) -> ListCategoriesResponse;
    }
}

typed_client! {
    /// The order a confirmed checkout becomes.
    pub Orders via OrderServiceClient {
        Write create_order(CreateOrderRequest) -> Order;
    }
}
