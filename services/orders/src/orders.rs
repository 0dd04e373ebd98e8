//! Orders, one key each (`order:{id}`, with its outbox), and per customer
//! a sorted set of their order ids by creation (`orders-of:{customer}`):
//! creating or changing an order costs that order whatever the customer's
//! history; listing reads the customer's orders.

use storefront_domain::query::{self, FieldType, Schema, Value};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::{Store, Updated, Versioned};
use storefront_proto::common::v1::{ListQuery, ResourceMeta};
use storefront_proto::error::codes;
use storefront_proto::orders::storage::v1::StoredOrder;
use storefront_proto::orders::v1::{CreateOrderRequest, ListOrdersResponse, Order, OrderStatus};

use crate::outbox::{self, Outbox};
use crate::published;
pub use crate::stored::{MAX_ATTEMPTS, changed_ms, order_key, read};

/// Order ids a listing reads from the customer's set per call, and orders
/// it reads at once.
const PAGE: usize = 500;
const AT_ONCE: usize = 64;

fn customer_key(customer_id: &str) -> String {
    format!("orders-of:{customer_id}")
}

pub use storefront_proto::names::order_status as status_name;

pub use storefront_domain::time::now;

fn not_found(order_id: &str) -> ServiceError {
    ServiceError::not_found("order", order_id)
}

fn invalid_transition(from: i32, to: OrderStatus) -> ServiceError {
    let message = format!(
        "an order {} cannot become {}",
        status_name(from),
        status_name(to as i32)
    );
    ServiceError::new(ErrorKind::Conflict, "INVALID_STATE_TRANSITION", message)
}

fn contended() -> ServiceError {
    ServiceError::new(
        ErrorKind::Conflict,
        codes::CONCURRENT_MODIFICATION,
        "the order is being changed; retry",
    )
}

pub struct Orders {
    pub store: Store,
    pub outbox: Outbox,
}

impl Orders {
    /// Creates the order once: a repeat with the same id returns it.
    pub async fn create(&self, req: CreateOrderRequest) -> Result<Order, ServiceError> {
        if req.order_id.is_empty() || req.customer_id.is_empty() || req.line_items.is_empty() {
            return Err(ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_ORDER",
                "an order needs an id, a customer and lines",
            ));
        }
        let order = new_order(req);
        let id = meta_id(&order).to_string();
        let customer_id = order.customer_id.clone();
        let listing = customer_key(&customer_id);
        // Without the order: the store's one write takes it apart from its
        // events; through the outbox each event carries it.
        let mut events = vec![outbox::headed(outbox::CREATED, &order)];
        if order.payment.is_some() {
            events.push(outbox::payment_headed(outbox::PAYMENT_AUTHORIZED, &order));
        }
        let published = published::insert(&self.outbox, &id, &order, &events, &listing);
        match published.await? {
            Some(true) => {
                tracing::info!(order_id = %id, "order created");
                return Ok(order);
            }
            Some(false) => return self.created_before(&id, &customer_id).await,
            None => {}
        }
        // Listed and marked for the outbox before it is written (both at
        // once: one round trip): a listing skips an id whose order is not
        // there (yet, or another customer's), so no order is ever written
        // and missing from its customer's list.
        let listed = self.store.zset_raise(&listing, &id, changed_ms(&order));
        let (listed, marked) = tokio::join!(listed, self.outbox.expect(&id));
        listed?;
        marked?;
        let events = (events.into_iter())
            .map(|e| outbox::with_order(e, &order))
            .collect();
        let stored = StoredOrder {
            order: Some(order.clone()),
            outbox: events,
        };
        if self
            .store
            .insert_message(&order_key(&id), &stored, None)
            .await?
        {
            tracing::info!(order_id = %id, "order created");
            let written = Versioned {
                version: 1,
                value: stored,
            };
            self.outbox.publish_written(&id, written).await;
            return Ok(order);
        }
        self.created_before(&id, &customer_id).await
    }

    /// Order `id`, created before (a retried confirm): only its customer
    /// may have it.
    async fn created_before(&self, id: &str, customer_id: &str) -> Result<Order, ServiceError> {
        match read(&self.store, id, None).await? {
            Some(existing) if existing.customer_id == customer_id => Ok(existing),
            Some(_) => Err(ServiceError::new(
                ErrorKind::Conflict,
                "ORDER_EXISTS",
                "order id taken",
            )),
            None => Err(ServiceError::internal(
                "the order vanished as it was created",
            )),
        }
    }

    pub async fn get(&self, customer_id: &str, order_id: &str) -> Result<Order, ServiceError> {
        read(&self.store, order_id, Some(customer_id))
            .await?
            .ok_or_else(|| not_found(order_id))
    }

    /// Every order of `customer_id`, read `AT_ONCE` at a time.
    async fn all_of(&self, customer_id: &str) -> Result<Vec<Order>, ServiceError> {
        let key = customer_key(customer_id);
        let mut orders = Vec::new();
        let mut after = (i64::MIN, String::new());
        loop {
            let page = self
                .store
                .zset_page(&key, (after.0, &after.1), PAGE)
                .await?;
            let Some((last, score)) = page.last() else {
                break;
            };
            after = (*score, last.clone());
            for ids in page.chunks(AT_ONCE) {
                let reads = ids
                    .iter()
                    .map(|(id, _)| read(&self.store, id, Some(customer_id)));
                for order in futures::future::try_join_all(reads).await? {
                    orders.extend(order);
                }
            }
            if page.len() < PAGE {
                break;
            }
        }
        Ok(orders)
    }

    pub async fn list(
        &self,
        customer_id: &str,
        query: &ListQuery,
    ) -> Result<ListOrdersResponse, ServiceError> {
        let all = self.all_of(customer_id).await?;
        let page = query::run::<OrderSchema>(&all, query, &(), &[(OrderField::CreatedAt, true)])?;
        let orders = page.items.into_iter().cloned().collect();
        Ok(ListOrdersResponse {
            page: Some(page.info),
            orders,
        })
    }

    /// Moves order `order_id` (of `customer_id`, when given) to `to` if
    /// `allowed(from)`; the same status again is a no-op.
    async fn transition(
        &self,
        customer_id: Option<&str>,
        order_id: &str,
        to: OrderStatus,
        allowed: fn(OrderStatus) -> bool,
    ) -> Result<Order, ServiceError> {
        self.outbox.expect(order_id).await?;
        let updated = self
            .store
            .update_message(
                &order_key(order_id),
                MAX_ATTEMPTS,
                None,
                |stored: &mut StoredOrder| {
                    let order = stored
                        .order
                        .as_mut()
                        .filter(|o| customer_id.is_none_or(|c| o.customer_id == c))
                        .ok_or_else(|| not_found(order_id))?;
                    if order.status == to as i32 {
                        return Ok((order.clone(), false));
                    }
                    let from =
                        OrderStatus::try_from(order.status).unwrap_or(OrderStatus::Unspecified);
                    if !allowed(from) {
                        return Err(invalid_transition(order.status, to));
                    }
                    order.status = to as i32;
                    if let Some(meta) = order.meta.as_mut() {
                        meta.version += 1;
                        meta.last_modified_at = Some(now());
                    }
                    let order = order.clone();
                    let kind = match to {
                        OrderStatus::Cancelled => outbox::CANCELLED,
                        _ => outbox::STATUS_CHANGED,
                    };
                    stored.outbox.push(outbox::event(kind, &order));
                    Ok((order, true))
                },
            )
            .await?;
        match updated {
            Updated::Done {
                result: (order, changed),
                value,
                version,
            } => {
                if changed {
                    let written = Versioned { version, value };
                    self.outbox.publish_written(order_id, written).await;
                }
                Ok(order)
            }
            Updated::Missing => Err(not_found(order_id)),
            Updated::Contended => Err(contended()),
        }
    }

    /// A customer cancels: fine until the order ships.
    pub async fn cancel(&self, customer_id: &str, order_id: &str) -> Result<Order, ServiceError> {
        self.transition(
            Some(customer_id),
            order_id,
            OrderStatus::Cancelled,
            |from| matches!(from, OrderStatus::Confirmed | OrderStatus::Processing),
        )
        .await
    }

    /// Fulfilment moves an order one step forward.
    pub async fn advance(&self, order_id: &str, to: i32) -> Result<Order, ServiceError> {
        let to = OrderStatus::try_from(to).unwrap_or(OrderStatus::Unspecified);
        let allowed: fn(OrderStatus) -> bool = match to {
            OrderStatus::Processing => |from| from == OrderStatus::Confirmed,
            OrderStatus::Shipped => |from| from == OrderStatus::Processing,
            OrderStatus::Delivered => |from| from == OrderStatus::Shipped,
            _ => {
                let message = "fulfilment sets PROCESSING, SHIPPED or DELIVERED";
                return Err(ServiceError::new(
                    ErrorKind::Validation,
                    codes::VALIDATION_ERROR,
                    message,
                )
                .with_violation(FieldViolation::new(
                    "status",
                    codes::INVALID_VALUE,
                    message,
                )));
            }
        };
        self.transition(None, order_id, to, allowed).await
    }
}

fn meta_id(order: &Order) -> &str {
    order.meta.as_ref().map_or("", |m| m.id.as_str())
}

pub(crate) fn new_order(req: CreateOrderRequest) -> Order {
    let created = now();
    let number = format!(
        "SF-{}",
        req.order_id
            .replace('-', "")
            .chars()
            .take(10)
            .collect::<String>()
            .to_uppercase()
    );
    Order {
        meta: Some(ResourceMeta {
            id: req.order_id,
            version: 1,
            created_at: Some(created),
            last_modified_at: Some(created),
        }),
        order_number: number,
        customer_id: req.customer_id,
        status: OrderStatus::Confirmed as i32,
        line_items: req.line_items,
        totals: req.totals,
        shipping_address: req.shipping_address,
        discount_codes: req.discount_codes,
        cart_id: req.cart_id,
        tax_lines: req.tax_lines,
        shipping_method: req.shipping_method,
        shipping_tax: req.shipping_tax,
        // What the shopper's client confirmed with is no part of the order.
        payment: req
            .payment
            .map(|p| storefront_proto::payments::v1::Payment {
                client_secret: String::new(),
                next_action: None,
                ..p
            }),
    }
}

#[derive(Clone, Copy)]
pub enum OrderField {
    CreatedAt,
    Status,
    TotalAmount,
}

pub struct OrderSchema;

impl Schema for OrderSchema {
    type Record = Order;
    type Field = OrderField;
    type Context = ();

    fn resolve(name: &str) -> Option<(OrderField, FieldType)> {
        Some(match name {
            "createdAt" => (OrderField::CreatedAt, FieldType::Timestamp),
            "status" => (OrderField::Status, FieldType::Text),
            "totalAmount" => (OrderField::TotalAmount, FieldType::Integer),
            _ => return None,
        })
    }

    fn id(o: &Order) -> &str {
        meta_id(o)
    }

    fn value<'a>(o: &'a Order, field: OrderField, _: &()) -> Value<'a> {
        match field {
            OrderField::CreatedAt => o
                .meta
                .as_ref()
                .and_then(|m| m.created_at)
                .map_or(Value::Missing, |t| Value::Timestamp(t.seconds, t.nanos)),
            OrderField::Status => Value::Text(status_name(o.status)),
            OrderField::TotalAmount => o
                .totals
                .as_ref()
                .and_then(|t| t.total.as_ref())
                .map_or(Value::Missing, |m| Value::Integer(m.cent_amount)),
        }
    }
}

#[cfg(test)]
mod vocabulary_tests {
    use storefront_domain::query::vocabulary::{ORDERS, assert_schema_follows};

    #[test]
    fn the_schema_follows_the_vocabulary() {
        assert_schema_follows::<super::OrderSchema>(&ORDERS);
    }
}

#[cfg(test)]
mod tests {
    use storefront_proto::common::v1::LineItem;

    use super::*;

    fn orders() -> Orders {
        let store = Store::memory();
        let outbox = Outbox::alone(store.clone());
        Orders { store, outbox }
    }

    fn request(order_id: &str, customer_id: &str) -> CreateOrderRequest {
        CreateOrderRequest {
            order_id: order_id.into(),
            customer_id: customer_id.into(),
            line_items: vec![LineItem {
                quantity: 1,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn ids(reply: &ListOrdersResponse) -> Vec<&str> {
        reply.orders.iter().map(meta_id).collect()
    }

    /// An order id is its customer's once: a retry returns the order, a
    /// second customer is refused, and their list does not show it.
    #[tokio::test]
    async fn an_order_is_created_once_and_listed_for_its_customer_only() {
        let orders = orders();
        for id in ["o1", "o2", "o3"] {
            orders.create(request(id, "c1")).await.unwrap();
        }
        let again = orders.create(request("o2", "c1")).await.unwrap();
        assert_eq!(meta_id(&again), "o2");
        let taken = orders.create(request("o2", "c2")).await.unwrap_err();
        assert_eq!(taken.code, "ORDER_EXISTS");
        let query = ListQuery::default();
        let mine = orders.list("c1", &query).await.unwrap();
        assert_eq!(mine.page.unwrap().total, 3);
        let mut listed = ids(&mine);
        listed.sort_unstable();
        assert_eq!(listed, ["o1", "o2", "o3"]);
        assert!(orders.list("c2", &query).await.unwrap().orders.is_empty());
        orders.get("c2", "o2").await.unwrap_err();
        let events = orders
            .store
            .stream_read_group(outbox::STREAM, "g", "c", 10)
            .await
            .unwrap();
        assert_eq!(events.len(), 3, "one event an order, the retry none");
    }

    /// A change is its own order's: one customer's history does not make
    /// another order's change refuse or touch it.
    #[tokio::test]
    async fn a_change_is_made_to_its_order_only() {
        let orders = orders();
        for n in 0..50 {
            orders
                .create(request(&format!("o{n}"), "c1"))
                .await
                .unwrap();
        }
        let cancelled = orders.cancel("c1", "o7").await.unwrap();
        assert_eq!(cancelled.status, OrderStatus::Cancelled as i32);
        orders.cancel("c2", "o8").await.unwrap_err();
        let advanced = orders
            .advance("o8", OrderStatus::Processing as i32)
            .await
            .unwrap();
        assert_eq!(advanced.meta.unwrap().version, 2);
        let untouched = orders.get("c1", "o9").await.unwrap();
        assert_eq!(untouched.status, OrderStatus::Confirmed as i32);
        assert_eq!(untouched.meta.unwrap().version, 1);
    }
}
