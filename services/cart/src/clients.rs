//! The calls the cart service makes, each with its retry policy, through
//! the mesh's one call path (breaker, retries, correlation id), and the
//! peers as the service's code sees them (`CatalogPeer`, `OrdersPeer`,
//! `PaymentsPeer`): the mesh's clients in production, in-crate fakes in the
//! checkout's unit tests.

use std::future::Future;
use std::pin::Pin;

use storefront_platform::client::call::{CallError, Caller, Current};
use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    AdjustStockBatchReply, AdjustStockBatchRequest, AdjustStockReply, AdjustStockRequest,
    GetProductRequest, GetProductsRequest, GetProductsResponse, Product,
};
use storefront_proto::catalog::v1::{ListCategoriesRequest, ListCategoriesResponse};
use storefront_proto::orders::v1::order_service_client::OrderServiceClient;
use storefront_proto::orders::v1::{
    CreateOrderBatchReply, CreateOrderBatchRequest, CreateOrderRequest, Order,
};
use storefront_proto::payments::v1::payment_service_client::PaymentServiceClient;
use storefront_proto::payments::v1::{
    ConfirmPaymentRequest, CreatePaymentRequest, GetPaymentRequest, MovePaymentRequest, Payment,
    VerifyWebhookBatchReply, VerifyWebhookBatchRequest, VerifyWebhookRequest, WebhookEvent,
};

typed_client! {
    /// Prices and stock of the products in carts; category ids for promotions.
    pub Catalog via CatalogServiceClient {
        Read get_product(GetProductRequest) -> Product;
        Read get_products(GetProductsRequest) -> GetProductsResponse;
        Read list_categories(ListCategoriesRequest) -> ListCategoriesResponse;
        Write adjust_stock(AdjustStockRequest) -> AdjustStockReply;
        Write adjust_stock_batch(AdjustStockBatchRequest) -> AdjustStockBatchReply;
    }
}

typed_client! {
    /// The order a confirmed checkout becomes.
    pub Orders via OrderServiceClient {
        Write create_order(CreateOrderRequest) -> Order;
        Write create_order_batch(CreateOrderBatchRequest) -> CreateOrderBatchReply;
    }
}

typed_client! {
    /// A checkout's payment: started, confirmed, read, and voided when its
    /// session's total changed; a provider's webhook deliveries verified.
    pub Payments via PaymentServiceClient {
        Write create_payment(CreatePaymentRequest) -> Payment;
        Write confirm_payment(ConfirmPaymentRequest) -> Payment;
        Read get_payment(GetPaymentRequest) -> Payment;
        Write void_payment(MovePaymentRequest) -> Payment;
        Read verify_webhook(VerifyWebhookRequest) -> WebhookEvent;
        Read verify_webhook_batch(VerifyWebhookBatchRequest) -> VerifyWebhookBatchReply;
    }
}

/// A peer's answer to come.
pub type Answer<'a, T> = Pin<Box<dyn Future<Output = Result<T, CallError>> + Send + 'a>>;

/// A batch method's answer from a peer without it (the traits' defaults):
/// Unimplemented, so that its items go one by one.
fn unserved<T>(method: &'static str) -> Answer<'static, T> {
    let status = tonic::Status::unimplemented(method);
    Box::pin(async move { Err(CallError::Status(status)) })
}

/// What carts and checkouts ask of the catalog.
pub trait CatalogPeer: Send + Sync {
    fn get_product(&self, message: GetProductRequest) -> Answer<'_, Product>;
    fn get_products(&self, message: GetProductsRequest) -> Answer<'_, GetProductsResponse>;
    fn adjust_stock(&self, message: AdjustStockRequest) -> Answer<'_, AdjustStockReply>;
    /// Several stock operations in one call; a peer without it answers
    /// Unimplemented, and they go one by one.
    fn adjust_stock_batch(
        &self,
        _message: AdjustStockBatchRequest,
    ) -> Answer<'_, AdjustStockBatchReply> {
        unserved("AdjustStockBatch")
    }
    fn list_categories(&self, message: ListCategoriesRequest)
    -> Answer<'_, ListCategoriesResponse>;
}

/// What a confirmed checkout asks of the orders service.
pub trait OrdersPeer: Send + Sync {
    fn create_order(&self, message: CreateOrderRequest) -> Answer<'_, Order>;
    /// Several orders in one call; a peer without it answers
    /// Unimplemented, and they go one by one.
    fn create_order_batch(
        &self,
        _message: CreateOrderBatchRequest,
    ) -> Answer<'_, CreateOrderBatchReply> {
        unserved("CreateOrderBatch")
    }
}

/// What a checkout asks of the payments service.
pub trait PaymentsPeer: Send + Sync {
    fn create_payment(&self, message: CreatePaymentRequest) -> Answer<'_, Payment>;
    fn confirm_payment(&self, message: ConfirmPaymentRequest) -> Answer<'_, Payment>;
    fn get_payment(&self, message: GetPaymentRequest) -> Answer<'_, Payment>;
    fn void_payment(&self, message: MovePaymentRequest) -> Answer<'_, Payment>;
    fn verify_webhook(&self, message: VerifyWebhookRequest) -> Answer<'_, WebhookEvent>;
    /// Several deliveries in one call; a peer without it answers
    /// Unimplemented, and they go one by one.
    fn verify_webhook_batch(
        &self,
        _message: VerifyWebhookBatchRequest,
    ) -> Answer<'_, VerifyWebhookBatchReply> {
        unserved("VerifyWebhookBatch")
    }
}

/// The payments service over the mesh.
pub struct MeshPayments(pub Caller);

impl PaymentsPeer for MeshPayments {
    fn create_payment(&self, message: CreatePaymentRequest) -> Answer<'_, Payment> {
        Box::pin(Payments(&self.0).create_payment(&Current, message))
    }

    fn confirm_payment(&self, message: ConfirmPaymentRequest) -> Answer<'_, Payment> {
        Box::pin(Payments(&self.0).confirm_payment(&Current, message))
    }

    fn get_payment(&self, message: GetPaymentRequest) -> Answer<'_, Payment> {
        Box::pin(Payments(&self.0).get_payment(&Current, message))
    }

    fn void_payment(&self, message: MovePaymentRequest) -> Answer<'_, Payment> {
        Box::pin(Payments(&self.0).void_payment(&Current, message))
    }

    fn verify_webhook(&self, message: VerifyWebhookRequest) -> Answer<'_, WebhookEvent> {
        Box::pin(Payments(&self.0).verify_webhook(&Current, message))
    }

    fn verify_webhook_batch(
        &self,
        message: VerifyWebhookBatchRequest,
    ) -> Answer<'_, VerifyWebhookBatchReply> {
        Box::pin(Payments(&self.0).verify_webhook_batch(&Current, message))
    }
}

/// The catalog over the mesh.
pub struct MeshCatalog(pub Caller);

impl CatalogPeer for MeshCatalog {
    fn get_product(&self, message: GetProductRequest) -> Answer<'_, Product> {
        Box::pin(Catalog(&self.0).get_product(&Current, message))
    }

    fn get_products(&self, message: GetProductsRequest) -> Answer<'_, GetProductsResponse> {
        Box::pin(Catalog(&self.0).get_products(&Current, message))
    }

    fn adjust_stock(&self, message: AdjustStockRequest) -> Answer<'_, AdjustStockReply> {
        Box::pin(Catalog(&self.0).adjust_stock(&Current, message))
    }

    fn adjust_stock_batch(
        &self,
        message: AdjustStockBatchRequest,
    ) -> Answer<'_, AdjustStockBatchReply> {
        Box::pin(Catalog(&self.0).adjust_stock_batch(&Current, message))
    }

    fn list_categories(
        &self,
        message: ListCategoriesRequest,
    ) -> Answer<'_, ListCategoriesResponse> {
        Box::pin(Catalog(&self.0).list_categories(&Current, message))
    }
}

/// The orders service over the mesh.
pub struct MeshOrders(pub Caller);

impl OrdersPeer for MeshOrders {
    fn create_order(&self, message: CreateOrderRequest) -> Answer<'_, Order> {
        Box::pin(Orders(&self.0).create_order(&Current, message))
    }

    fn create_order_batch(
        &self,
        message: CreateOrderBatchRequest,
    ) -> Answer<'_, CreateOrderBatchReply> {
        Box::pin(Orders(&self.0).create_order_batch(&Current, message))
    }
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::CART;

    use super::{Catalog, Orders, Payments};

    /// Each account is granted exactly what its code calls: a method added
    /// to a client without its allow-list would be refused in every
    /// environment, one left in the list grants more than is used.
    #[test]
    fn the_allow_lists_are_what_the_clients_call() {
        assert_eq!(CART.methods_on("catalog"), Some(Catalog::methods()));
        assert_eq!(CART.methods_on("orders"), Some(Orders::methods()));
        assert_eq!(CART.methods_on("payments"), Some(Payments::methods()));
        let callees: Vec<&str> = CART.downstreams().map(|p| p.name).collect();
        assert_eq!(callees, ["catalog", "orders", "payments"]);
    }
}
