//! How an order is kept: one key each (`order:{id}`), the order with its
//! outbox (`StoredOrder`), read alike by the orders, their outbox and the
//! updates feed.

use storefront_platform::error::ServiceError;
use storefront_platform::store::Store;
use storefront_proto::orders::storage::v1::StoredOrder;
use storefront_proto::orders::v1::Order;

/// Attempts of a contended write before answering 409.
pub const MAX_ATTEMPTS: usize = 64;

pub fn order_key(order_id: &str) -> String {
    format!("order:{order_id}")
}

/// When `order` changed last, in ms since the epoch.
pub fn changed_ms(order: &Order) -> i64 {
    let at = order.meta.as_ref().and_then(|m| m.last_modified_at);
    at.map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos / 1_000_000))
}

/// Order `order_id` as stored, if `customer_id` (when given) owns it.
pub async fn read(
    store: &Store,
    order_id: &str,
    customer_id: Option<&str>,
) -> Result<Option<Order>, ServiceError> {
    let found = store
        .get_message::<StoredOrder>(&order_key(order_id))
        .await?;
    Ok(found
        .and_then(|f| f.value.order)
        .filter(|o| customer_id.is_none_or(|c| o.customer_id == c)))
}
