//! A cancelled order's units go back into the catalog's stock: from the
//! outbox, before its `order.cancelled` event is published, so that a
//! failed call is retried by the sweep until it lands; the catalog applies
//! the return once by its id (`return:{order id}`).

use storefront_platform::client::call::{Caller, Current};
use storefront_platform::error::ServiceError;
use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{AdjustStockReply, AdjustStockRequest, StockAction};
use storefront_proto::error::codes;
use storefront_proto::orders::v1::Order;

typed_client! {
    /// Stock returned by cancelled orders.
    pub Catalog via CatalogServiceClient {
        Write adjust_stock(AdjustStockRequest) -> AdjustStockReply;
    }
}

pub async fn give_back(catalog: &Caller, order: &Order) -> Result<(), ServiceError> {
    let lines = storefront_domain::stock::by_sku(&order.line_items);
    if lines.is_empty() {
        return Ok(());
    }
    let id = order.meta.as_ref().map_or("", |m| m.id.as_str());
    let message = AdjustStockRequest {
        operation_id: format!("return:{id}"),
        action: StockAction::Return as i32,
        lines,
        hold_id: String::new(),
    };
    Catalog(catalog)
        .adjust_stock(&Current, message)
        .await
        .map_err(|e| e.unavailable(codes::CATALOG_UNAVAILABLE, "the catalog is unreachable"))?;
    tracing::info!(order_id = id, "stock of a cancelled order returned");
    Ok(())
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::ORDERS;

    use super::Catalog;

    #[test]
    fn the_allow_list_is_what_the_client_calls() {
        assert_eq!(ORDERS.methods_on("catalog"), Some(Catalog::methods()));
    }
}
