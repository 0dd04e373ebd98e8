//! Orders on their way to the back office. An order change and its event
//! are one compare-and-set of the stored order (the event waits in its
//! outbox), so there is never an order without its event or an event
//! without its order. The writer then publishes the outbox to the order
//! stream and removes what it published; an order whose writer died in
//! between is marked pending beforehand, and a sweep publishes it.
//! Delivery is at least once: a consumer skips an event id seen before.
//! A new order whose events have no effect to make first skips all this
//! where the store writes it with its events at once (`published`).

use std::collections::HashSet;
use std::time::Duration;

use prost::Message;
use storefront_platform::error::ServiceError;
use storefront_platform::store::{Held, Store, StoreError, Updated, Versioned};
use storefront_proto::orders::storage::v1::{OrderEvent, StoredOrder};
use storefront_proto::orders::v1::Order;
use tokio_util::sync::CancellationToken;

use crate::stored::{MAX_ATTEMPTS, order_key};
use storefront_json::events::order_event;
use storefront_proto::names::order_status as status_name;

/// The Redis Stream the back office reads (`sf:order-events`).
pub const STREAM: &str = "order-events";
/// The field of a stream entry holding its CloudEvent (JSON).
pub const CLOUDEVENT: &str = "cloudevent";
/// The orders whose outbox may hold unpublished events.
const PENDING: &str = "order-outbox-pending";
/// Entries the stream keeps (about): weeks of orders for a large shop;
/// a consumer further behind reconciles through the internal port.
pub(crate) const STREAM_LENGTH: usize = 1_000_000;
/// How often each replica publishes what a failed writer left.
const SWEEP_EVERY: Duration = Duration::from_secs(5);
/// Orders a sweep looks at, at most.
const SWEEP_ORDERS: usize = 100;

pub use crate::kinds::{CANCELLED, CREATED, PAYMENT_AUTHORIZED, STATUS_CHANGED};

/// The event of `order` as it now is: its id is the order's id and
/// version, the same for every retry of the same change.
pub fn event(kind: &str, order: &Order) -> OrderEvent {
    with_order(headed(kind, order), order)
}

/// A payment event of `order`: beside an order event of the same version
/// (`payment.authorized` with `order.created`), so its id names its kind.
pub fn payment_event(kind: &str, order: &Order) -> OrderEvent {
    with_order(payment_headed(kind, order), order)
}

/// [`event`] without its order: for a writer that has the order at hand
/// (`published`), which copies it into its events only to store them.
pub(crate) fn headed(kind: &str, order: &Order) -> OrderEvent {
    let meta = order.meta.as_ref();
    let (id, version) = meta.map_or(("", 0), |m| (m.id.as_str(), m.version));
    OrderEvent {
        id: format!("{id}.{version}"),
        r#type: kind.to_string(),
        occurred_at: meta.and_then(|m| m.last_modified_at),
        order: None,
    }
}

/// [`payment_event`] without its order.
pub(crate) fn payment_headed(kind: &str, order: &Order) -> OrderEvent {
    let mut event = headed(kind, order);
    event.id = format!("{}.{kind}", event.id);
    event
}

pub(crate) fn with_order(event: OrderEvent, order: &Order) -> OrderEvent {
    OrderEvent {
        order: Some(order.clone()),
        ..event
    }
}

/// A stream entry's fields: readable ones for tools (`redis-cli`), the
/// event as a CloudEvent in JSON (`cloudevent`: the order as the public
/// API shows it, for any back office), and the whole order as
/// `storefront.orders.v1.Order` protobuf bytes.
pub(crate) fn fields(event: &OrderEvent) -> Vec<(&'static str, Vec<u8>)> {
    let none = Order::default();
    let order = event.order.as_ref().unwrap_or(&none);
    fields_of(event, order, order.encode_to_vec())
}

/// [`fields`] of `event` (whose own order may be left out) for `order`,
/// encoded as `encoded`: an order's events share one encoding of it.
pub(crate) fn fields_of(
    event: &OrderEvent,
    order: &Order,
    encoded: Vec<u8>,
) -> Vec<(&'static str, Vec<u8>)> {
    let order_id = order.meta.as_ref().map_or("", |m| m.id.as_str());
    let occurred = event.occurred_at.map(|t| t.to_string()).unwrap_or_default();
    let mut fields = vec![
        ("eventId", event.id.clone().into_bytes()),
        ("type", event.r#type.clone().into_bytes()),
        ("orderId", order_id.as_bytes().to_vec()),
        ("orderNumber", order.order_number.as_bytes().to_vec()),
        ("customerId", order.customer_id.as_bytes().to_vec()),
        ("status", status_name(order.status).as_bytes().to_vec()),
        ("occurredAt", occurred.clone().into_bytes()),
        ("order", encoded),
    ];
    let cloud = order_event(event.id.clone(), &event.r#type, occurred, order.clone())
        .map_err(|e| e.to_string())
        .and_then(|e| serde_json::to_vec(&e).map_err(|e| e.to_string()));
    match cloud {
        Ok(json) => fields.push((CLOUDEVENT, json)),
        Err(e) => tracing::error!(error = %e, event = %event.id, "an order event without its JSON"),
    }
    fields
}

/// Stream entries' fields as `Store::stream_add_all` takes them.
pub(crate) fn borrowed<'a>(
    encoded: &'a [Vec<(&'static str, Vec<u8>)>],
) -> Vec<Vec<(&'a str, &'a [u8])>> {
    (encoded.iter())
        .map(|f| f.iter().map(|(n, v)| (*n, &v[..])).collect())
        .collect()
}

#[derive(Clone)]
pub struct Outbox {
    pub store: Store,
    /// Where a cancelled order's stock goes back (None: nowhere, in tests
    /// of the outbox alone).
    pub catalog: Option<storefront_platform::client::call::Caller>,
    /// Where an order's payment is captured, voided or refunded (None: in
    /// tests of the outbox alone).
    pub payments: Option<storefront_platform::client::call::Caller>,
    /// `PAYMENT_CAPTURE`.
    pub capture: crate::payment::CaptureAt,
}

impl Outbox {
    /// Before a change that writes an event into order `order_id`.
    pub async fn expect(&self, order_id: &str) -> Result<(), ServiceError> {
        Ok(self.store.set_add(PENDING, order_id).await?)
    }

    /// Publishes `order_id`'s outbox, then removes what it published; a
    /// failure is logged and left to the sweep (the change has landed).
    pub async fn publish_now(&self, order_id: &str) {
        self.publish_logged(order_id, None).await;
    }

    /// As [`Outbox::publish_now`], for the order as this process just wrote
    /// it (`written`, at its version): its outbox is not read again, and
    /// what was published leaves it by one compare-and-set when nothing
    /// wrote the order since.
    pub async fn publish_written(&self, order_id: &str, written: Versioned<StoredOrder>) {
        self.publish_logged(order_id, Some(written)).await;
    }

    async fn publish_logged(&self, order_id: &str, known: Option<Versioned<StoredOrder>>) {
        if let Err(e) = self.publish(order_id, known).await {
            tracing::warn!(error = %e, "order events left for the next sweep");
        }
    }

    async fn publish(
        &self,
        order_id: &str,
        known: Option<Versioned<StoredOrder>>,
    ) -> Result<(), ServiceError> {
        let key = order_key(order_id);
        let known = match known {
            Some(known) => Some(known),
            None => self.store.get_message::<StoredOrder>(&key).await?,
        };
        let outbox = known.as_ref().map_or(&[][..], |k| &k.value.outbox[..]);
        let mut published = HashSet::new();
        let mut moved = false;
        // Each event's effects first (stock given back, a payment moved),
        // in order; then every event to the stream in one round trip, as
        // the order's last change is recorded.
        for event in outbox {
            if let (CANCELLED, Some(order), Some(catalog)) =
                (event.r#type.as_str(), &event.order, &self.catalog)
            {
                crate::restock::give_back(catalog, order).await?;
            }
            if let (Some(order), Some(payments)) = (&event.order, &self.payments)
                && let Some(how) = crate::payment::due(&event.r#type, order, self.capture)
            {
                let payment = crate::payment::make(payments, order, how).await?;
                moved |= self.record_payment(order_id, payment, how).await?;
            }
            published.insert(event.id.clone());
        }
        let encoded: Vec<_> = outbox.iter().map(fields).collect();
        let entries = borrowed(&encoded);
        let added = async {
            match entries.is_empty() {
                true => Ok(()),
                false => (self.store.stream_add_all(STREAM, &entries, STREAM_LENGTH))
                    .await
                    .map(drop),
            }
        };
        tokio::try_join!(added, self.record_changes(outbox))?;
        let emptied = if published.is_empty() {
            true
        } else {
            // A payment moved since (`moved`) wrote the order: read again.
            let seed = known.filter(|_| !moved).map(Held::known);
            // Only whether it emptied is wanted: the order moves into the
            // turn rather than being copied back.
            let updated = self
                .store
                .update_message_encoded_from(
                    &key,
                    seed,
                    MAX_ATTEMPTS,
                    None,
                    |stored: &mut StoredOrder| {
                        stored.outbox.retain(|e| !published.contains(&e.id));
                        Ok::<_, ServiceError>(stored.outbox.is_empty())
                    },
                )
                .await?;
            matches!(
                updated,
                Updated::Done { result: true, .. } | Updated::Missing
            )
        };
        if emptied {
            // Unmarked, then checked again: a change that marked the order
            // in between has its event in the outbox now.
            let left = self
                .store
                .set_remove_then_get_message::<StoredOrder>(PENDING, order_id, &key);
            let left = left.await?;
            if left.is_some_and(|stored| !stored.value.outbox.is_empty()) {
                self.expect(order_id).await?;
            }
        }
        // A payment moved: its event waits in the outbox; out now.
        if moved {
            Box::pin(self.publish(order_id, None)).await?;
        }
        Ok(())
    }

    /// Records when the orders of `events` last changed: the events of one
    /// change (`order.created` and `payment.authorized`) record it once
    /// (the set keeps the greater time: the same again is a no-op).
    async fn record_changes(&self, events: &[OrderEvent]) -> Result<(), StoreError> {
        let mut recorded: Option<i64> = None;
        for order in events.iter().filter_map(|e| e.order.as_ref()) {
            let change = crate::stored::changed_ms(order);
            if recorded != Some(change) {
                crate::updates::record(&self.store, order).await?;
                recorded = Some(change);
            }
        }
        Ok(())
    }

    /// Keeps `payment` on the order, with its event, unless the order has it
    /// so already (a retried move): whether it changed.
    async fn record_payment(
        &self,
        order_id: &str,
        payment: storefront_proto::payments::v1::Payment,
        how: crate::payment::Move,
    ) -> Result<bool, ServiceError> {
        let payment = crate::payment::kept(payment);
        let updated = self
            .store
            .update_message(
                &order_key(order_id),
                MAX_ATTEMPTS,
                None,
                |stored: &mut StoredOrder| {
                    let Some(order) = stored.order.as_mut() else {
                        return Ok::<_, ServiceError>(false);
                    };
                    if order.payment.as_ref() == Some(&payment) {
                        return Ok(false);
                    }
                    order.payment = Some(payment.clone());
                    if let Some(meta) = order.meta.as_mut() {
                        meta.version += 1;
                        meta.last_modified_at = Some(storefront_domain::time::now());
                    }
                    let order = order.clone();
                    stored.outbox.push(payment_event(how.event(), &order));
                    Ok(true)
                },
            )
            .await?;
        Ok(matches!(updated, Updated::Done { result: true, .. }))
    }

    /// Publishes, every [`SWEEP_EVERY`], the outboxes of orders marked
    /// pending (their writer stopped before publishing), until `shutdown`.
    pub async fn sweep(self, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(SWEEP_EVERY) => {}
            }
            if let Err(e) = self.sweep_once().await {
                tracing::warn!(error = %e, "the order outbox sweep could not run");
            }
        }
    }

    async fn sweep_once(&self) -> Result<(), ServiceError> {
        for order_id in self.store.set_sample(PENDING, SWEEP_ORDERS).await? {
            self.publish_now(&order_id).await;
        }
        Ok(())
    }
}

#[cfg(test)]
impl Outbox {
    /// An outbox over `store` alone: no catalog or payments to call.
    pub(crate) fn alone(store: Store) -> Self {
        Self {
            store,
            catalog: None,
            payments: None,
            capture: crate::payment::CaptureAt::OnShip,
        }
    }
}

#[cfg(test)]
mod tests {
    use storefront_proto::common::v1::ResourceMeta;

    use super::*;

    fn order(id: &str) -> Order {
        Order {
            meta: Some(ResourceMeta {
                id: id.into(),
                version: 1,
                ..Default::default()
            }),
            customer_id: "c1".into(),
            ..Default::default()
        }
    }

    /// A writer that stopped after its change but before publishing left
    /// its event in the outbox and the order marked: the sweep publishes it
    /// once and clears both; a mark without events (stopped before the
    /// change) is only cleared.
    #[tokio::test]
    async fn the_sweep_publishes_what_a_stopped_writer_left() {
        let store = Store::memory();
        let outbox = Outbox::alone(store.clone());
        outbox.expect("o1").await.unwrap();
        outbox.expect("o2").await.unwrap();
        let stored = StoredOrder {
            order: Some(order("o1")),
            outbox: vec![event(CREATED, &order("o1"))],
        };
        store
            .insert_message(&order_key("o1"), &stored, None)
            .await
            .unwrap();
        outbox.sweep_once().await.unwrap();
        let entries = store.stream_read_group(STREAM, "g", "c", 10).await.unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].field("eventId"), Some(&b"o1.1"[..]));
        let stored = store
            .get_message::<StoredOrder>(&order_key("o1"))
            .await
            .unwrap();
        assert!(stored.unwrap().value.outbox.is_empty());
        assert!(store.set_sample(PENDING, 10).await.unwrap().is_empty());
        outbox.sweep_once().await.unwrap();
        assert!(
            store
                .stream_read_group(STREAM, "g", "c", 10)
                .await
                .unwrap()
                .is_empty()
        );
    }

    /// The order as its writer wrote it is published without reading it;
    /// a change that landed in between (a second event) makes that seed
    /// stale: what was published still leaves the outbox, the newer event
    /// stays in it, and the order stays marked for the sweep.
    #[tokio::test]
    async fn a_written_order_publishes_even_when_changed_since() {
        let store = Store::memory();
        let outbox = Outbox::alone(store.clone());
        let key = order_key("o1");
        outbox.expect("o1").await.unwrap();
        let created = StoredOrder {
            order: Some(order("o1")),
            outbox: vec![
                event(CREATED, &order("o1")),
                payment_event(PAYMENT_AUTHORIZED, &order("o1")),
            ],
        };
        store.insert_message(&key, &created, None).await.unwrap();
        let mut changed = order("o1");
        changed.meta.as_mut().unwrap().version = 2;
        let mut newer = created.clone();
        newer.outbox.push(event(STATUS_CHANGED, &changed));
        let bytes = newer.encode_to_vec();
        assert_eq!(store.replace(&key, 1, &bytes, None).await.unwrap(), Some(2));

        let written = Versioned {
            version: 1,
            value: created,
        };
        outbox.publish_written("o1", written).await;
        let entries = store.stream_read_group(STREAM, "g", "c", 10).await.unwrap();
        let ids: Vec<_> = entries.iter().map(|e| e.field("eventId")).collect();
        assert_eq!(
            ids,
            [Some(&b"o1.1"[..]), Some(&b"o1.1.payment.authorized"[..])]
        );
        let left = store.get_message::<StoredOrder>(&key).await.unwrap();
        let left: Vec<_> = left
            .unwrap()
            .value
            .outbox
            .into_iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(left, ["o1.2"]);
        assert_eq!(store.set_sample(PENDING, 10).await.unwrap(), ["o1"]);

        // Unchanged since: one compare-and-set empties it.
        let current = store
            .get_message::<StoredOrder>(&key)
            .await
            .unwrap()
            .unwrap();
        outbox.publish_written("o1", current).await;
        let stored = store.get_message::<StoredOrder>(&key).await.unwrap();
        assert!(stored.unwrap().value.outbox.is_empty());
        assert!(store.set_sample(PENDING, 10).await.unwrap().is_empty());
    }
}
