//! The `storefront.orders.v1.OrderService` gRPC implementation.

use std::sync::Arc;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::error::codes;
use storefront_proto::orders::v1::order_service_server::OrderService;
use storefront_proto::orders::v1::*;
use tonic::{Request, Response, Status};

use crate::orders::Orders;

#[derive(Clone)]
pub struct OrdersApi {
    pub orders: Arc<Orders>,
    /// The webhooks order events are delivered to (`ORDER_WEBHOOK_URLS`).
    pub webhooks: Arc<Vec<reqwest::Url>>,
}

type Reply<T> = Result<Response<T>, Status>;

/// Orders one `CreateOrderBatch` call may carry.
pub const MAX_BATCH_ORDERS: usize = 64;

#[tonic::async_trait]
impl OrderService for OrdersApi {
    async fn create_order(&self, request: Request<CreateOrderRequest>) -> Reply<Order> {
        Ok(Response::new(
            self.orders.create(request.into_inner()).await?,
        ))
    }

    async fn create_order_batch(
        &self,
        request: Request<CreateOrderBatchRequest>,
    ) -> Reply<CreateOrderBatchReply> {
        let orders = request.into_inner().orders;
        if orders.len() > MAX_BATCH_ORDERS {
            let message = format!("at most {MAX_BATCH_ORDERS} orders at once");
            let e = ServiceError::new(ErrorKind::BadRequest, codes::VALIDATION_ERROR, message);
            return Err(e.into());
        }
        let made = orders.into_iter().map(|req| self.orders.create(req));
        let outcomes = (futures::future::join_all(made).await.into_iter())
            .map(|made| match made {
                Ok(order) => CreateOrderOutcome {
                    order: Some(order),
                    error: None,
                },
                Err(e) => CreateOrderOutcome {
                    order: None,
                    error: Some(Status::from(e).into()),
                },
            })
            .collect();
        Ok(Response::new(CreateOrderBatchReply { outcomes }))
    }

    async fn get_order(&self, request: Request<GetOrderRequest>) -> Reply<Order> {
        let req = request.into_inner();
        Ok(Response::new(
            self.orders.get(&req.customer_id, &req.order_id).await?,
        ))
    }

    async fn list_orders(&self, request: Request<ListOrdersRequest>) -> Reply<ListOrdersResponse> {
        let req = request.into_inner();
        Ok(Response::new(
            self.orders
                .list(&req.customer_id, &req.query.unwrap_or_default())
                .await?,
        ))
    }

    async fn cancel_order(&self, request: Request<CancelOrderRequest>) -> Reply<Order> {
        let req = request.into_inner();
        Ok(Response::new(
            self.orders.cancel(&req.customer_id, &req.order_id).await?,
        ))
    }

    async fn advance_order(&self, request: Request<AdvanceOrderRequest>) -> Reply<Order> {
        let req = request.into_inner();
        Ok(Response::new(
            self.orders.advance(&req.order_id, req.status).await?,
        ))
    }

    async fn list_order_updates(
        &self,
        request: Request<ListOrderUpdatesRequest>,
    ) -> Reply<ListOrderUpdatesResponse> {
        let req = request.into_inner();
        Ok(Response::new(
            crate::updates::list(&self.orders.store, &req).await?,
        ))
    }

    async fn list_order_events(
        &self,
        request: Request<ListOrderEventsRequest>,
    ) -> Reply<ListOrderEventsResponse> {
        let req = request.into_inner();
        Ok(Response::new(
            crate::feed::list(&self.orders.store, &req).await?,
        ))
    }

    async fn list_webhook_deliveries(
        &self,
        _: Request<ListWebhookDeliveriesRequest>,
    ) -> Reply<ListWebhookDeliveriesResponse> {
        Ok(Response::new(
            crate::webhooks::deliveries(&self.orders.store, &self.webhooks).await?,
        ))
    }
}
