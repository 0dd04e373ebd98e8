//! The calls the cart service makes, each with its retry policy, through
//! the mesh's one call path (breaker, retries, correlation id).

use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    AdjustStockReply, AdjustStockRequest, GetProductRequest, GetProductsRequest,
    GetProductsResponse, Product,
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
        Write adjust_stock(AdjustStockRequest) -> AdjustStockReply;
    }
}

typed_client! {
    /// The order a confirmed checkout becomes.
    pub Orders via OrderServiceClient {
        Write create_order(CreateOrderRequest) -> Order;
    }
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::CART;

    use super::{Catalog, Orders};

    /// Each account is granted exactly what its code calls: a method added
    /// to a client without its allow-list would be refused in every
    /// environment, one left in the list grants more than is used.
    #[test]
    fn the_allow_lists_are_what_the_clients_call() {
        assert_eq!(CART.methods_on("catalog"), Some(Catalog::methods()));
        assert_eq!(CART.methods_on("orders"), Some(Orders::methods()));
        let callees: Vec<&str> = CART.downstreams().map(|p| p.name).collect();
        assert_eq!(callees, ["catalog", "orders"]);
    }
}
