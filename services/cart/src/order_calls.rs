//! The orders confirms running at once make (`CreateOrder`), gathered
//! (`gather.rs`): an order made while one is in flight goes with every
//! other one waiting then in the next `CreateOrderBatch`, each made and
//! answered as if sent alone (an orders service that does not serve it,
//! or does not let this caller, takes them one by one).

use std::sync::Arc;

use storefront_proto::orders::v1::{
    CreateOrderBatchReply, CreateOrderBatchRequest, CreateOrderRequest, Order,
};

use crate::clients::{Answer, OrdersPeer};
use crate::gather::{Answers, Batched, Batching, Gather, outcome};

/// Orders one `CreateOrderBatch` carries (the orders service takes 64).
const ORDER_BATCH: usize = 32;

pub(crate) struct Creates {
    peer: Arc<dyn OrdersPeer>,
    batching: Batching,
}

impl Batched for Creates {
    type Kind = ();
    type Item = CreateOrderRequest;
    type Out = Order;
    const BOUND: usize = ORDER_BATCH;

    fn weight(_: &CreateOrderRequest) -> usize {
        1
    }

    fn send<'a>(&'a self, _: &'a (), orders: Vec<CreateOrderRequest>) -> Answers<'a, Order> {
        let peer = &self.peer;
        Box::pin(self.batching.send(
            orders,
            |orders| peer.create_order_batch(CreateOrderBatchRequest { orders }),
            |reply: CreateOrderBatchReply| {
                let outcomes = reply.outcomes.into_iter();
                outcomes.map(|o| outcome(o.order, o.error)).collect()
            },
            |order| peer.create_order(order),
        ))
    }
}

/// `inner` with its orders gathered.
pub struct GatheredOrders {
    inner: Arc<dyn OrdersPeer>,
    creates: Gather<Creates>,
}

impl GatheredOrders {
    pub fn new(inner: Arc<dyn OrdersPeer>) -> Self {
        Self {
            creates: Gather::new(Creates {
                peer: inner.clone(),
                batching: Batching::new("CreateOrderBatch"),
            }),
            inner,
        }
    }
}

impl OrdersPeer for GatheredOrders {
    fn create_order(&self, message: CreateOrderRequest) -> Answer<'_, Order> {
        Box::pin(self.creates.call((), message))
    }

    fn create_order_batch(
        &self,
        message: CreateOrderBatchRequest,
    ) -> Answer<'_, CreateOrderBatchReply> {
        self.inner.create_order_batch(message)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use storefront_platform::client::call::CallError;
    use storefront_platform::error::{ErrorKind, ServiceError};
    use storefront_proto::common::v1::ResourceMeta;
    use storefront_proto::orders::v1::CreateOrderOutcome;
    use tokio::sync::Semaphore;

    use super::*;

    /// Makes every order but "refused", refused as the orders service
    /// refuses a bad one; each call answered once a permit is given.
    struct Held {
        /// Each call's order ids.
        calls: Mutex<Vec<Vec<String>>>,
        permits: Semaphore,
    }

    fn made(req: &CreateOrderRequest) -> Result<Order, tonic::Status> {
        if req.order_id == "refused" {
            let e = ServiceError::new(ErrorKind::BadRequest, "INVALID_ORDER", "no lines");
            return Err(e.into());
        }
        Ok(Order {
            meta: Some(ResourceMeta {
                id: req.order_id.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    impl OrdersPeer for Held {
        fn create_order(&self, message: CreateOrderRequest) -> Answer<'_, Order> {
            self.calls
                .lock()
                .unwrap()
                .push(vec![message.order_id.clone()]);
            Box::pin(async move {
                self.permits.acquire().await.unwrap().forget();
                made(&message).map_err(CallError::Status)
            })
        }

        fn create_order_batch(
            &self,
            message: CreateOrderBatchRequest,
        ) -> Answer<'_, CreateOrderBatchReply> {
            let ids = message.orders.iter().map(|o| o.order_id.clone());
            self.calls.lock().unwrap().push(ids.collect());
            Box::pin(async move {
                self.permits.acquire().await.unwrap().forget();
                let outcomes = (message.orders.iter())
                    .map(|o| match made(o) {
                        Ok(order) => CreateOrderOutcome {
                            order: Some(order),
                            error: None,
                        },
                        Err(status) => CreateOrderOutcome {
                            order: None,
                            error: Some(status.into()),
                        },
                    })
                    .collect();
                Ok(CreateOrderBatchReply { outcomes })
            })
        }
    }

    #[tokio::test]
    async fn orders_waiting_go_in_one_batch_and_a_refusal_stays_a_refusal() {
        let peer = Arc::new(Held {
            calls: Mutex::default(),
            permits: Semaphore::new(0),
        });
        let gathered = Arc::new(GatheredOrders {
            inner: peer.clone(),
            creates: Gather::stalled_after(
                Creates {
                    peer: peer.clone(),
                    batching: Batching::new("CreateOrderBatch"),
                },
                Duration::from_secs(3600),
            ),
        });
        let create = |id: &str| {
            let (gathered, id) = (gathered.clone(), id.to_string());
            tokio::spawn(async move {
                let order = CreateOrderRequest {
                    order_id: id,
                    ..Default::default()
                };
                gathered.create_order(order).await
            })
        };
        // One in flight (a second only past a stall), then two wait.
        let calls_reach = |n: usize| {
            let peer = peer.clone();
            async move {
                for _ in 0..500 {
                    if peer.calls.lock().unwrap().len() >= n {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                panic!("{n} calls never came");
            }
        };
        let first = create("o1");
        calls_reach(1).await;
        let first = [first];
        let (second, refused) = (create("o2"), create("refused"));
        for _ in 0..500 {
            if gathered.creates.waiting(&()) >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        peer.permits.add_permits(2);
        let id = |o: Order| o.meta.unwrap().id;
        for (created, expected) in first.into_iter().zip(["o1"]) {
            assert_eq!(id(created.await.unwrap().unwrap()), expected);
        }
        assert_eq!(id(second.await.unwrap().unwrap()), "o2");
        let refusal = refused.await.unwrap().unwrap_err().refusal();
        assert_eq!(refusal.map(|e| e.code), Some("INVALID_ORDER".into()));
        let calls = peer.calls.lock().unwrap().clone();
        assert_eq!(calls, vec![vec!["o1"], vec!["o2", "refused"]]);
    }
}
