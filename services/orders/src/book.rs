//! Orders kept per customer (one `OrderBook` a customer, so listing is one
//! read), with an index from order id to customer for fulfilment.

use storefront_domain::query::{self, FieldType, Schema, Value};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::{Store, Updated};
use storefront_proto::common::v1::{ListQuery, ResourceMeta};
use storefront_proto::orders::storage::v1::OrderBook;
use storefront_proto::orders::v1::{CreateOrderRequest, ListOrdersResponse, Order, OrderStatus};

use crate::outbox::{self, Outbox};

/// Attempts of a contended write before answering 409.
pub const MAX_ATTEMPTS: usize = 64;

pub fn book_key(customer_id: &str) -> String {
    format!("orderbook:{customer_id}")
}

fn owner_key(order_id: &str) -> String {
    format!("order-owner:{order_id}")
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
        "CONCURRENT_MODIFICATION",
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
        let owner = self
            .store
            .insert(&owner_key(&req.order_id), req.customer_id.as_bytes(), None)
            .await?;
        if !owner {
            // Someone created (or is creating) it: only its customer may.
            let found = self.store.get(&owner_key(&req.order_id)).await?;
            if found.is_some_and(|f| f.value != req.customer_id.as_bytes()) {
                return Err(ServiceError::new(
                    ErrorKind::Conflict,
                    "ORDER_EXISTS",
                    "order id taken",
                ));
            }
        }
        let customer_id = req.customer_id.clone();
        let key = book_key(&customer_id);
        self.store
            .insert_message(&key, &OrderBook::default(), None)
            .await?;
        self.outbox.expect(&customer_id).await?;
        let order = new_order(req);
        let id = order
            .meta
            .as_ref()
            .map(|m| m.id.clone())
            .unwrap_or_default();
        let updated = self
            .store
            .update_message(&key, MAX_ATTEMPTS, None, |book: &mut OrderBook| {
                if let Some(existing) = book.orders.iter().find(|o| meta_id(o) == id) {
                    return Ok::<_, ServiceError>((existing.clone(), false));
                }
                book.orders.push(order.clone());
                book.outbox.push(outbox::event(outbox::CREATED, &order));
                Ok((order.clone(), true))
            })
            .await?;
        match updated {
            Updated::Done {
                result: (order, created),
                ..
            } => {
                if created {
                    tracing::info!(order_id = %id, "order created");
                    self.outbox.publish_now(&customer_id).await;
                }
                Ok(order)
            }
            Updated::Missing => Err(ServiceError::internal("order book vanished")),
            Updated::Contended => Err(contended()),
        }
    }

    pub async fn get(&self, customer_id: &str, order_id: &str) -> Result<Order, ServiceError> {
        let book = self
            .store
            .get_message::<OrderBook>(&book_key(customer_id))
            .await?;
        book.and_then(|b| b.value.orders.into_iter().find(|o| meta_id(o) == order_id))
            .ok_or_else(|| not_found(order_id))
    }

    pub async fn list(
        &self,
        customer_id: &str,
        query: &ListQuery,
    ) -> Result<ListOrdersResponse, ServiceError> {
        let book = self
            .store
            .get_message::<OrderBook>(&book_key(customer_id))
            .await?
            .map(|b| b.value)
            .unwrap_or_default();
        let page =
            query::run::<OrderSchema>(&book.orders, query, &(), &[(OrderField::CreatedAt, true)])?;
        let orders = page.items.into_iter().cloned().collect();
        Ok(ListOrdersResponse {
            page: Some(page.info),
            orders,
        })
    }

    /// Moves one order of `customer_id` to `to` if `allowed(from)`; the
    /// same status again is a no-op.
    async fn transition(
        &self,
        customer_id: &str,
        order_id: &str,
        to: OrderStatus,
        allowed: fn(OrderStatus) -> bool,
    ) -> Result<Order, ServiceError> {
        self.outbox.expect(customer_id).await?;
        let updated = self
            .store
            .update_message(
                &book_key(customer_id),
                MAX_ATTEMPTS,
                None,
                |book: &mut OrderBook| {
                    let order = book
                        .orders
                        .iter_mut()
                        .find(|o| meta_id(o) == order_id)
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
                    book.outbox.push(outbox::event(kind, &order));
                    Ok((order, true))
                },
            )
            .await?;
        match updated {
            Updated::Done {
                result: (order, changed),
                ..
            } => {
                if changed {
                    self.outbox.publish_now(customer_id).await;
                }
                Ok(order)
            }
            Updated::Missing => Err(not_found(order_id)),
            Updated::Contended => Err(contended()),
        }
    }

    /// A customer cancels: fine until the order ships.
    pub async fn cancel(&self, customer_id: &str, order_id: &str) -> Result<Order, ServiceError> {
        self.transition(customer_id, order_id, OrderStatus::Cancelled, |from| {
            matches!(from, OrderStatus::Confirmed | OrderStatus::Processing)
        })
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
                return Err(
                    ServiceError::new(ErrorKind::Validation, "VALIDATION_ERROR", message)
                        .with_violation(FieldViolation::new("status", "INVALID_VALUE", message)),
                );
            }
        };
        let owner = self
            .store
            .get(&owner_key(order_id))
            .await?
            .ok_or_else(|| not_found(order_id))?;
        let customer_id = String::from_utf8_lossy(&owner.value).into_owned();
        self.transition(&customer_id, order_id, to, allowed).await
    }
}

fn meta_id(order: &Order) -> &str {
    order.meta.as_ref().map_or("", |m| m.id.as_str())
}

fn new_order(req: CreateOrderRequest) -> Order {
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
