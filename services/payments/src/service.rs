//! The `storefront.payments.v1.PaymentService` gRPC implementation: the
//! provider's calls, their answers as the API's `Payment`, and every
//! provider refusal mapped to a status here and nowhere else.

use std::sync::Arc;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::common::v1::Money as ApiMoney;
use storefront_proto::payments::v1 as api;
use storefront_proto::payments::v1::payment_service_server::PaymentService;
use tonic::{Request, Response, Status};

use crate::error::PaymentError;
use crate::payment::{Money, Payment, PaymentStatus};
use crate::provider::PaymentProvider;
use crate::test_provider::TestProvider;

/// The codes of the payments service's refusals.
pub mod codes {
    /// 409: not possible in the payment's state.
    pub const PAYMENT_STATE: &str = "PAYMENT_STATE";
    /// 402: the method was declined (only from a call that cannot answer
    /// the declined payment itself).
    pub const PAYMENT_DECLINED: &str = "PAYMENT_DECLINED";
    /// 503: the provider is out of reach.
    pub const PAYMENTS_UNAVAILABLE: &str = "PAYMENTS_UNAVAILABLE";
    /// 400: a webhook whose signature does not verify.
    pub const INVALID_SIGNATURE: &str = "INVALID_SIGNATURE";
}

/// Deliveries one VerifyWebhookBatch takes (the cart sends 32 at most).
pub const MAX_BATCH_WEBHOOKS: usize = 64;

pub struct PaymentsApi {
    pub provider: Arc<dyn PaymentProvider>,
    /// The same provider when it is the test one (its 3-D Secure page).
    pub test: Option<Arc<TestProvider>>,
}

/// The one place a provider's refusal becomes a status.
pub fn service_error(error: PaymentError) -> ServiceError {
    use storefront_proto::error::codes as common;
    let message = error.to_string();
    match error {
        PaymentError::Declined { .. } => {
            ServiceError::new(ErrorKind::PaymentRequired, codes::PAYMENT_DECLINED, message)
        }
        PaymentError::NotFound(_) => {
            ServiceError::new(ErrorKind::NotFound, common::NOT_FOUND, message)
        }
        PaymentError::State(_) => {
            ServiceError::new(ErrorKind::Conflict, codes::PAYMENT_STATE, message)
        }
        PaymentError::Invalid(_) => {
            ServiceError::new(ErrorKind::Validation, common::VALIDATION_ERROR, message)
        }
        PaymentError::Unavailable(_) => {
            ServiceError::new(ErrorKind::Unavailable, codes::PAYMENTS_UNAVAILABLE, message)
        }
        PaymentError::BadSignature(_) => {
            ServiceError::new(ErrorKind::BadRequest, codes::INVALID_SIGNATURE, message)
        }
    }
}

fn status(error: PaymentError) -> Status {
    service_error(error).into()
}

/// The API's payment for the provider's.
pub fn to_api(provider: &str, payment: Payment) -> api::Payment {
    use api::PaymentStatus as S;
    let status = match payment.status {
        PaymentStatus::RequiresPaymentMethod => S::RequiresPaymentMethod,
        PaymentStatus::RequiresAction => S::RequiresAction,
        PaymentStatus::Authorized => S::Authorized,
        PaymentStatus::Captured => S::Captured,
        PaymentStatus::Voided => S::Voided,
        PaymentStatus::Refunded => S::Refunded,
    };
    let fraction_digits = storefront_domain::currencies::fraction_digits(&payment.amount.currency);
    api::Payment {
        id: payment.id,
        provider: provider.to_string(),
        status: status as i32,
        amount: Some(ApiMoney {
            currency_code: payment.amount.currency,
            cent_amount: payment.amount.amount,
            fraction_digits,
        }),
        amount_captured: payment.amount_captured,
        amount_refunded: payment.amount_refunded,
        client_secret: payment.client_secret.unwrap_or_default(),
        next_action: payment.next_action.map(|a| api::NextAction {
            kind: a.kind,
            url: a.url.unwrap_or_default(),
        }),
        payment_method: payment.payment_method.unwrap_or_default(),
        decline_code: payment.decline_code.unwrap_or_default(),
        reference: payment.reference,
    }
}

fn some_amount(amount: i64) -> Option<i64> {
    (amount > 0).then_some(amount)
}

impl PaymentsApi {
    fn answer(&self, payment: Payment) -> Response<api::Payment> {
        Response::new(to_api(self.provider.name(), payment))
    }

    fn answered(
        &self,
        moved: Result<Payment, PaymentError>,
    ) -> Result<Response<api::Payment>, Status> {
        moved.map(|p| self.answer(p)).map_err(status)
    }

    /// Confirms `id` with `method`; a decline answers the declined payment
    /// (its `decline_code` set), which the caller shows the shopper.
    async fn confirm(&self, id: &str, method: &str, key: &str) -> Result<Payment, PaymentError> {
        match self.provider.confirm(id, method, key).await {
            Err(PaymentError::Declined { decline_code }) => {
                let mut payment = self.provider.get(id).await?;
                payment.decline_code = Some(decline_code);
                Ok(payment)
            }
            other => other,
        }
    }

    /// A delivery verified by its signature, its payment read again from
    /// the provider (VerifyWebhook, and each item of VerifyWebhookBatch).
    async fn verified(&self, req: api::VerifyWebhookRequest) -> Result<api::WebhookEvent, Status> {
        if req.provider != self.provider.name() {
            let message = "no such payment provider here";
            return Err(ServiceError::new(
                ErrorKind::NotFound,
                storefront_proto::error::codes::NOT_FOUND,
                message,
            )
            .into());
        }
        let now = storefront_domain::time::now().seconds;
        let event = self
            .provider
            .webhook(&req.signature, &req.body, now)
            .map_err(status)?;
        // The event's own fields are not trusted beyond its payment's id:
        // what the payment is for, and whether it holds money, is read from
        // the provider.
        let (reference, holds_money) = match self.provider.get(&event.payment_id).await {
            Ok(payment) => (payment.reference, payment.status.is_authorized()),
            Err(PaymentError::NotFound(_) | PaymentError::Invalid(_)) => (String::new(), false),
            Err(e) => return Err(status(e)),
        };
        Ok(api::WebhookEvent {
            id: event.id,
            r#type: event.kind,
            payment_id: event.payment_id,
            reference,
            holds_money,
        })
    }
}

#[tonic::async_trait]
impl PaymentService for PaymentsApi {
    async fn create_payment(
        &self,
        request: Request<api::CreatePaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        let amount = Money {
            currency: req.currency_code,
            amount: req.amount,
        };
        let created = self
            .provider
            .create(amount, &req.reference, &req.idempotency_key, None)
            .await
            .map_err(status)?;
        if req.payment_method.is_empty() {
            return Ok(self.answer(created));
        }
        let key = format!("{}-confirm", req.idempotency_key);
        let confirmed = self
            .confirm(&created.id, &req.payment_method, &key)
            .await
            .map_err(status)?;
        Ok(self.answer(confirmed))
    }

    async fn confirm_payment(
        &self,
        request: Request<api::ConfirmPaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        let payment = self
            .confirm(&req.id, &req.payment_method, &req.idempotency_key)
            .await
            .map_err(status)?;
        Ok(self.answer(payment))
    }

    async fn get_payment(
        &self,
        request: Request<api::GetPaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let id = request.into_inner().id;
        let payment = self.provider.get(&id).await.map_err(status)?;
        Ok(self.answer(payment))
    }

    async fn capture_payment(
        &self,
        request: Request<api::MovePaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        let (id, key) = (&req.id, &req.idempotency_key);
        let moved = self.provider.capture(id, some_amount(req.amount), key);
        self.answered(moved.await)
    }

    async fn void_payment(
        &self,
        request: Request<api::MovePaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        self.answered(self.provider.void(&req.id, &req.idempotency_key).await)
    }

    async fn refund_payment(
        &self,
        request: Request<api::MovePaymentRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        let (id, key) = (&req.id, &req.idempotency_key);
        let moved = self.provider.refund(id, some_amount(req.amount), key);
        self.answered(moved.await)
    }

    async fn verify_webhook(
        &self,
        request: Request<api::VerifyWebhookRequest>,
    ) -> Result<Response<api::WebhookEvent>, Status> {
        Ok(Response::new(self.verified(request.into_inner()).await?))
    }

    async fn verify_webhook_batch(
        &self,
        request: Request<api::VerifyWebhookBatchRequest>,
    ) -> Result<Response<api::VerifyWebhookBatchReply>, Status> {
        let webhooks = request.into_inner().webhooks;
        if webhooks.len() > MAX_BATCH_WEBHOOKS {
            let message = format!("at most {MAX_BATCH_WEBHOOKS} webhooks at once");
            let code = storefront_proto::error::codes::VALIDATION_ERROR;
            return Err(ServiceError::new(ErrorKind::BadRequest, code, message).into());
        }
        let verified = webhooks.into_iter().map(|w| self.verified(w));
        let outcomes = (futures::future::join_all(verified).await.into_iter())
            .map(|verified| match verified {
                Ok(event) => api::VerifyWebhookOutcome {
                    event: Some(event),
                    error: None,
                },
                Err(status) => api::VerifyWebhookOutcome {
                    event: None,
                    error: Some(status.into()),
                },
            })
            .collect();
        Ok(Response::new(api::VerifyWebhookBatchReply { outcomes }))
    }

    async fn complete_action(
        &self,
        request: Request<api::CompleteActionRequest>,
    ) -> Result<Response<api::Payment>, Status> {
        let req = request.into_inner();
        let Some(test) = &self.test else {
            let message = "only the test provider's actions are completed here";
            return Err(
                ServiceError::new(ErrorKind::Conflict, codes::PAYMENT_STATE, message).into(),
            );
        };
        let payment = test.complete_action(&req.id, req.passed).map_err(status)?;
        Ok(self.answer(payment))
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
