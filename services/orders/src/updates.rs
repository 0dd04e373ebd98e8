//! Orders by when they last changed, across customers, for the back
//! office to reconcile with the stream (a consumer that fell behind the
//! stream's length, or a new one). Each published event raises its order
//! in one sorted set (score: the order's last change, in ms; raised only,
//! so an event published late changes nothing); a page walks it from a
//! cursor and reads each order as it is now.

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::{Store, StoreError};
use storefront_proto::orders::v1::{
    ListOrderUpdatesRequest, ListOrderUpdatesResponse, Order, OrderStatus,
};

use crate::stored::{changed_ms, read};

/// The sorted set of every order by its last change.
pub(crate) const UPDATED: &str = "orders-updated";
/// Entries a page looks at, at most (a status filter skips the others):
/// each is one read of its order.
const SCAN: usize = 200;
const MAX_LIMIT: u32 = 100;
const DEFAULT_LIMIT: u32 = 20;

/// Records that `order` changed (idempotent: publishing again is a no-op).
pub async fn record(store: &Store, order: &Order) -> Result<(), StoreError> {
    store
        .zset_raise(UPDATED, &member(order), changed_ms(order))
        .await
}

/// `order`'s member in the set of orders by last change.
pub(crate) fn member(order: &Order) -> String {
    let id = order.meta.as_ref().map_or("", |m| m.id.as_str());
    format!("{}/{id}", order.customer_id)
}

/// A page's `limit`: 1 to 100, 0 the default 20.
pub fn page_limit(limit: u32) -> Result<u32, ServiceError> {
    match limit {
        0 => Ok(DEFAULT_LIMIT),
        n if n <= MAX_LIMIT => Ok(n),
        _ => {
            let message = format!("limit must be between 1 and {MAX_LIMIT}");
            Err(ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_LIMIT",
                message,
            ))
        }
    }
}

fn invalid_cursor() -> ServiceError {
    ServiceError::new(
        ErrorKind::BadRequest,
        "INVALID_CURSOR",
        "the cursor is not one this service gave",
    )
}

/// `<ms>:<customer>/<order>`, as `next_cursor` writes it.
fn parse_cursor(cursor: &str) -> Result<(i64, String), ServiceError> {
    let (score, member) = cursor.split_once(':').ok_or_else(invalid_cursor)?;
    let score = score.parse::<i64>().map_err(|_| invalid_cursor())?;
    if !member.contains('/') {
        return Err(invalid_cursor());
    }
    Ok((score, member.to_string()))
}

pub async fn list(
    store: &Store,
    req: &ListOrderUpdatesRequest,
) -> Result<ListOrderUpdatesResponse, ServiceError> {
    let limit = page_limit(req.limit)? as usize;
    let (mut score, mut member) = if req.cursor.is_empty() {
        let since = req
            .updated_since
            .map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos / 1_000_000));
        // Just before `since`: members sort after the empty string.
        (since, String::new())
    } else {
        parse_cursor(&req.cursor)?
    };
    let wanted = OrderStatus::try_from(req.status).unwrap_or(OrderStatus::Unspecified);
    let entries = store
        .zset_page(UPDATED, (score, &member), SCAN.min(limit * 4).max(limit))
        .await?;
    let mut orders = Vec::new();
    let mut stopped_early = false;
    for (entry, at) in entries {
        if orders.len() == limit {
            stopped_early = true;
            break;
        }
        if let Some(order) = current(store, &entry).await?
            && (wanted == OrderStatus::Unspecified || order.status == wanted as i32)
        {
            orders.push(order);
        }
        (score, member) = (at, entry);
    }
    let next_cursor = if member.is_empty() {
        String::new()
    } else {
        format!("{score}:{member}")
    };
    let more = stopped_early
        || !store
            .zset_page(UPDATED, (score, &member), 1)
            .await?
            .is_empty();
    Ok(ListOrderUpdatesResponse {
        orders,
        next_cursor,
        more,
    })
}

/// The order a member names, as it is now.
async fn current(store: &Store, member: &str) -> Result<Option<Order>, ServiceError> {
    let Some((customer, order_id)) = member.split_once('/') else {
        return Ok(None);
    };
    read(store, order_id, Some(customer)).await
}
