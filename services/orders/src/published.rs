//! A new order written with its events in one step where the store can
//! (one Redis server, memory): the order with an empty outbox, its events
//! on the stream, listed for its customer and as updated, all or none.
//! Nothing is left for the outbox: no marker to set first, no outbox to
//! empty after (a confirm's five round trips to the store become one). On
//! a Redis Cluster, whose keys lie in different slots, and when an event
//! has an effect to make before it is published (a payment captured at
//! confirm), the order goes the outbox's way (`outbox`).

use prost::Message;
use storefront_platform::error::ServiceError;
use storefront_platform::store::Published;
use storefront_proto::orders::storage::v1::OrderEvent;
use storefront_proto::orders::v1::Order;

use crate::outbox::{self, Outbox, STREAM, STREAM_LENGTH};
use crate::stored::{changed_ms, order_key};
use crate::updates;

/// Creates order `id` (`order`, with `events`, which need not carry it)
/// listed in `listing`: whether it was created, or None when it must go
/// the outbox's way. The order is encoded once, for its events and for
/// its stored value.
pub(crate) async fn insert(
    outbox: &Outbox,
    id: &str,
    order: &Order,
    events: &[OrderEvent],
    listing: &str,
) -> Result<Option<bool>, ServiceError> {
    let effect = |e: &OrderEvent| crate::payment::due(&e.r#type, order, outbox.capture);
    if events.iter().any(|e| effect(e).is_some()) {
        return Ok(None);
    }
    let bytes = order.encode_to_vec();
    let encoded: Vec<_> = (events.iter())
        .map(|e| outbox::fields_of(e, order, bytes.clone()))
        .collect();
    let entries = outbox::borrowed(&encoded);
    let (changed, member) = (changed_ms(order), updates::member(order));
    let raised = [
        (listing, id, changed),
        (updates::UPDATED, member.as_str(), changed),
    ];
    let published = Published {
        stream: STREAM,
        entries: &entries,
        max_len: STREAM_LENGTH,
        raised: &raised,
    };
    let value = stored(&bytes);
    let store = &outbox.store;
    Ok(store
        .insert_published(&order_key(id), &value, &published)
        .await?)
}

/// `StoredOrder { order, outbox: [] }` encoded, from the order's
/// encoding (`bytes`): the same bytes, without encoding the order again.
fn stored(bytes: &[u8]) -> Vec<u8> {
    use prost::encoding::{WireType, encode_key, encode_varint};
    let mut value = Vec::with_capacity(bytes.len() + 11);
    encode_key(STORED_ORDER, WireType::LengthDelimited, &mut value);
    encode_varint(bytes.len() as u64, &mut value);
    value.extend_from_slice(bytes);
    value
}

/// `StoredOrder.order`.
const STORED_ORDER: u32 = 1;

#[cfg(test)]
mod tests {
    use storefront_platform::store::Store;
    use storefront_platform::testing::{RedisCluster, RedisServer};
    use storefront_proto::common::v1::{LineItem, ListQuery};
    use storefront_proto::orders::v1::{CreateOrderRequest, ListOrderUpdatesRequest};
    use storefront_proto::payments::v1::{Payment, PaymentStatus};

    use crate::orders::Orders;
    use crate::outbox::{Outbox, STREAM};
    use crate::stored::order_key;
    use storefront_proto::orders::storage::v1::StoredOrder;

    fn paid(order_id: &str) -> CreateOrderRequest {
        CreateOrderRequest {
            order_id: order_id.into(),
            customer_id: "c1".into(),
            line_items: vec![LineItem {
                quantity: 1,
                ..Default::default()
            }],
            payment: Some(Payment {
                id: "p1".into(),
                status: PaymentStatus::Authorized as i32,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The stored value made from the order's encoding is the one
    /// `StoredOrder` encodes, for an order with everything and an empty one.
    #[test]
    fn a_stored_order_is_its_encoding_wrapped() {
        use prost::Message;
        let full = crate::orders::new_order(paid("o1"));
        for order in [full, Default::default()] {
            let whole = StoredOrder {
                order: Some(order.clone()),
                outbox: Vec::new(),
            };
            assert_eq!(super::stored(&order.encode_to_vec()), whole.encode_to_vec());
        }
    }

    /// On every store an order is created with both its events on the
    /// stream, listed for its customer and as updated, and nothing left
    /// for the sweep; a retried create adds no event (through the outbox
    /// it marks the order again, for the sweep to find nothing to send). On one Redis server
    /// and in memory it is written with an empty outbox at version 1 (the
    /// one write); on a cluster the outbox is emptied after (version 2).
    #[tokio::test]
    async fn an_order_is_written_with_its_events_where_the_store_can() {
        let redis = RedisServer::start().expect("redis-server on PATH");
        let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
        let stores = [
            (Store::memory(), 1),
            (Store::redis(&redis.url, "t:").await.unwrap(), 1),
            (Store::redis(&cluster.url, "t:").await.unwrap(), 2),
        ];
        for (store, version) in stores {
            let b = store.backend();
            let outbox = Outbox::alone(store.clone());
            let orders = Orders { store, outbox };
            let order = orders.create(paid("o1")).await.unwrap();
            let pending = orders.store.set_sample("order-outbox-pending", 10);
            assert!(pending.await.unwrap().is_empty(), "{b}");
            let again = orders.create(paid("o1")).await.unwrap();
            assert_eq!(again, order, "{b}");
            let events = orders.store.stream_after(STREAM, "", 10).await.unwrap();
            let kinds: Vec<&[u8]> = events.iter().filter_map(|e| e.field("type")).collect();
            assert_eq!(kinds, [&b"order.created"[..], b"payment.authorized"], "{b}");
            let key = order_key("o1");
            let stored = orders.store.get_message::<StoredOrder>(&key);
            let stored = stored.await.unwrap().expect("the order");
            assert!(stored.value.outbox.is_empty(), "{b}");
            assert_eq!(stored.version, version, "{b}");
            let listed = orders.list("c1", &ListQuery::default()).await.unwrap();
            assert_eq!(listed.page.unwrap().total, 1, "{b}");
            let updates = ListOrderUpdatesRequest::default();
            let updates = crate::updates::list(&orders.store, &updates).await.unwrap();
            assert_eq!(updates.orders, [order], "{b}");
        }
    }
}
