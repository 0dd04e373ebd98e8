//! The payments program's answers as its callers meet them.

use std::sync::Arc;

use storefront_proto::payments::v1 as api;
use storefront_proto::payments::v1::payment_service_server::PaymentService;

use super::PaymentsApi;
use crate::payment::Money;
use crate::provider::PaymentProvider;
use crate::test_provider::{TestProvider, VISA};

/// The last delivery the test provider signed, verified by the program.
async fn verified(api: &PaymentsApi, test: &TestProvider) -> api::WebhookEvent {
    let (signature, body) = test.deliveries().pop().expect("a delivery");
    let request = api::VerifyWebhookRequest {
        provider: "test".into(),
        signature,
        body,
    };
    let event = api.verify_webhook(tonic::Request::new(request)).await;
    event.expect("verified").into_inner()
}

/// The program over its test provider, and a payment for `reference`
/// authorized there (its id).
async fn authorized(reference: &str) -> (PaymentsApi, Arc<TestProvider>, String) {
    let test = Arc::new(TestProvider::new("whsec_unit"));
    let api = PaymentsApi {
        provider: test.clone(),
        test: Some(test.clone()),
    };
    let amount = Money {
        currency: "AUD".into(),
        amount: 4995,
    };
    let created = test.create(amount, reference, "k-create", None).await;
    let id = created.expect("created").id;
    test.confirm(&id, VISA, "k-confirm")
        .await
        .expect("authorized");
    (api, test, id)
}

#[tokio::test]
async fn a_verified_delivery_says_whether_its_payment_holds_money() {
    let (api, test, id) = authorized("cs-1").await;
    let authorized = verified(&api, &test).await;
    assert_eq!(
        authorized.r#type,
        "payment_intent.amount_capturable_updated"
    );
    assert_eq!(
        (authorized.reference.as_str(), authorized.holds_money),
        ("cs-1", true)
    );
    test.void(&id, "k-void").await.expect("voided");
    let canceled = verified(&api, &test).await;
    assert_eq!(canceled.r#type, "payment_intent.canceled");
    assert_eq!(
        (canceled.reference.as_str(), canceled.holds_money),
        ("cs-1", false)
    );
}

#[tokio::test]
async fn a_batch_verifies_each_delivery_as_alone() {
    let (api, test, _) = authorized("cs-2").await;
    let (signature, body) = test.deliveries().pop().expect("a delivery");
    let delivery = |provider: &str, signature: &str| api::VerifyWebhookRequest {
        provider: provider.into(),
        signature: signature.into(),
        body: body.clone(),
    };
    let webhooks = vec![
        delivery("test", &signature),
        delivery("test", "t=1,v1=00"),
        delivery("stripe", &signature),
        delivery("test", &signature),
    ];
    let alone = futures::future::join_all(webhooks.iter().map(|w| {
        let request = tonic::Request::new(w.clone());
        async { api.verify_webhook(request).await.map(|r| r.into_inner()) }
    }))
    .await;
    let request = api::VerifyWebhookBatchRequest { webhooks };
    let batch = api.verify_webhook_batch(tonic::Request::new(request)).await;
    let outcomes = batch.expect("answered").into_inner().outcomes;
    assert_eq!(outcomes.len(), alone.len());
    for (outcome, alone) in outcomes.into_iter().zip(alone) {
        match alone {
            Ok(event) => {
                assert_eq!(outcome.event.as_ref(), Some(&event));
                assert_eq!(
                    (event.reference.as_str(), event.holds_money),
                    ("cs-2", true)
                );
            }
            Err(status) => {
                assert!(outcome.event.is_none());
                let error = tonic::Status::from(outcome.error.expect("its error"));
                assert_eq!(
                    (error.code(), error.message()),
                    (status.code(), status.message())
                );
                assert_eq!(error.details(), status.details());
            }
        }
    }

    let many = vec![delivery("test", &signature); super::MAX_BATCH_WEBHOOKS + 1];
    let request = api::VerifyWebhookBatchRequest { webhooks: many };
    let refused = api.verify_webhook_batch(tonic::Request::new(request)).await;
    assert_eq!(
        refused.expect_err("too many").code(),
        tonic::Code::InvalidArgument
    );
}
