//! The webhook verifications the cart asks of the payments service
//! (`VerifyWebhook`), gathered (`gather.rs`): a provider delivers many
//! events at once (the test provider 16, Stripe as they come), and a
//! verification asked while one is in flight goes with every other one
//! waiting then in the next `VerifyWebhookBatch`, each verified and
//! answered as if sent alone (a payments service that does not serve it,
//! or does not let this caller, takes them one by one). The other payment
//! calls go as they are: a shopper's payment is one call of its session.

use std::sync::Arc;

use storefront_proto::payments::v1::{
    ConfirmPaymentRequest, CreatePaymentRequest, GetPaymentRequest, MovePaymentRequest, Payment,
    VerifyWebhookBatchReply, VerifyWebhookBatchRequest, VerifyWebhookRequest, WebhookEvent,
};

use crate::clients::{Answer, PaymentsPeer};
use crate::gather::{Answers, Batched, Batching, Gather, outcome};

/// Deliveries one `VerifyWebhookBatch` carries (the payments service
/// takes 64).
const WEBHOOK_BATCH: usize = 32;

pub(crate) struct Verifies {
    peer: Arc<dyn PaymentsPeer>,
    batching: Batching,
}

impl Batched for Verifies {
    type Kind = ();
    type Item = VerifyWebhookRequest;
    type Out = WebhookEvent;
    const BOUND: usize = WEBHOOK_BATCH;

    fn weight(_: &VerifyWebhookRequest) -> usize {
        1
    }

    fn send<'a>(
        &'a self,
        _: &'a (),
        webhooks: Vec<VerifyWebhookRequest>,
    ) -> Answers<'a, WebhookEvent> {
        let peer = &self.peer;
        Box::pin(self.batching.send(
            webhooks,
            |webhooks| peer.verify_webhook_batch(VerifyWebhookBatchRequest { webhooks }),
            |reply: VerifyWebhookBatchReply| {
                let outcomes = reply.outcomes.into_iter();
                outcomes.map(|o| outcome(o.event, o.error)).collect()
            },
            |webhook| peer.verify_webhook(webhook),
        ))
    }
}

/// `inner` with its webhook verifications gathered.
pub struct GatheredPayments {
    inner: Arc<dyn PaymentsPeer>,
    verifies: Gather<Verifies>,
}

impl GatheredPayments {
    pub fn new(inner: Arc<dyn PaymentsPeer>) -> Self {
        Self {
            verifies: Gather::new(Verifies {
                peer: inner.clone(),
                batching: Batching::new("VerifyWebhookBatch"),
            }),
            inner,
        }
    }
}

impl PaymentsPeer for GatheredPayments {
    fn create_payment(&self, message: CreatePaymentRequest) -> Answer<'_, Payment> {
        self.inner.create_payment(message)
    }

    fn confirm_payment(&self, message: ConfirmPaymentRequest) -> Answer<'_, Payment> {
        self.inner.confirm_payment(message)
    }

    fn get_payment(&self, message: GetPaymentRequest) -> Answer<'_, Payment> {
        self.inner.get_payment(message)
    }

    fn void_payment(&self, message: MovePaymentRequest) -> Answer<'_, Payment> {
        self.inner.void_payment(message)
    }

    fn verify_webhook(&self, message: VerifyWebhookRequest) -> Answer<'_, WebhookEvent> {
        Box::pin(self.verifies.call((), message))
    }

    fn verify_webhook_batch(
        &self,
        message: VerifyWebhookBatchRequest,
    ) -> Answer<'_, VerifyWebhookBatchReply> {
        self.inner.verify_webhook_batch(message)
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::Mutex;
    use std::time::Duration;

    use storefront_payments::payment::Money;
    use storefront_payments::provider::PaymentProvider;
    use storefront_payments::service::PaymentsApi;
    use storefront_payments::test_provider::{TestProvider, VISA};
    use storefront_platform::client::call::CallError;
    use storefront_proto::payments::v1::payment_service_server::PaymentService;
    use tokio::sync::Semaphore;

    use super::*;

    /// The payments service's own verification (its test provider), each
    /// call's size recorded and answered once a permit is given.
    struct Held {
        api: PaymentsApi,
        calls: Mutex<Vec<usize>>,
        permits: Semaphore,
    }

    impl Held {
        fn answer<'a, T: Send + 'a>(
            &'a self,
            items: usize,
            call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>> + Send + 'a,
        ) -> Answer<'a, T> {
            self.calls.lock().unwrap().push(items);
            Box::pin(async move {
                self.permits.acquire().await.unwrap().forget();
                call.await
                    .map(tonic::Response::into_inner)
                    .map_err(CallError::Status)
            })
        }
    }

    fn not_here<T>() -> Answer<'static, T> {
        let status = tonic::Status::unimplemented("not in this test");
        Box::pin(async move { Err(CallError::Status(status)) })
    }

    impl PaymentsPeer for Held {
        fn create_payment(&self, _: CreatePaymentRequest) -> Answer<'_, Payment> {
            not_here()
        }

        fn confirm_payment(&self, _: ConfirmPaymentRequest) -> Answer<'_, Payment> {
            not_here()
        }

        fn get_payment(&self, _: GetPaymentRequest) -> Answer<'_, Payment> {
            not_here()
        }

        fn void_payment(&self, _: MovePaymentRequest) -> Answer<'_, Payment> {
            not_here()
        }

        fn verify_webhook(&self, message: VerifyWebhookRequest) -> Answer<'_, WebhookEvent> {
            self.answer(1, self.api.verify_webhook(tonic::Request::new(message)))
        }

        fn verify_webhook_batch(
            &self,
            message: VerifyWebhookBatchRequest,
        ) -> Answer<'_, VerifyWebhookBatchReply> {
            let items = message.webhooks.len();
            let call = self.api.verify_webhook_batch(tonic::Request::new(message));
            self.answer(items, call)
        }
    }

    #[tokio::test]
    async fn deliveries_waiting_go_in_one_batch_and_a_forgery_stays_refused() {
        let test = Arc::new(TestProvider::new("whsec_unit"));
        let amount = Money {
            currency: "AUD".into(),
            amount: 700,
        };
        let created = test.create(amount, "cs-9", "k-1", None).await.unwrap();
        test.confirm(&created.id, VISA, "k-2").await.unwrap();
        let (signature, body) = test.deliveries().pop().expect("a delivery");
        let peer = Arc::new(Held {
            api: PaymentsApi {
                provider: test.clone(),
                test: Some(test),
            },
            calls: Mutex::default(),
            permits: Semaphore::new(0),
        });
        let gathered = Arc::new(GatheredPayments {
            inner: peer.clone(),
            verifies: Gather::stalled_after(
                Verifies {
                    peer: peer.clone(),
                    batching: Batching::new("VerifyWebhookBatch"),
                },
                Duration::from_secs(3600),
            ),
        });
        let verify = |signature: &str| {
            let webhook = VerifyWebhookRequest {
                provider: "test".into(),
                signature: signature.into(),
                body: body.clone(),
            };
            let gathered = gathered.clone();
            tokio::spawn(async move { gathered.verify_webhook(webhook).await })
        };
        // One in flight, then two wait for it.
        let first = verify(&signature);
        for _ in 0..500 {
            if !peer.calls.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let (second, forged) = (verify(&signature), verify("t=1,v1=00"));
        for _ in 0..500 {
            if gathered.verifies.waiting(&()) >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        peer.permits.add_permits(2);
        for verified in [first, second] {
            let event = verified.await.unwrap().expect("verified");
            assert_eq!(
                (event.reference.as_str(), event.holds_money),
                ("cs-9", true)
            );
        }
        let refusal = forged.await.unwrap().unwrap_err().refusal();
        assert_eq!(refusal.map(|e| e.code), Some("INVALID_SIGNATURE".into()));
        assert_eq!(*peer.calls.lock().unwrap(), [1, 2]);
    }
}
