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

#[tokio::test]
async fn a_verified_delivery_says_whether_its_payment_holds_money() {
    let test = Arc::new(TestProvider::new("whsec_unit"));
    let api = PaymentsApi {
        provider: test.clone(),
        test: Some(test.clone()),
    };
    let amount = Money {
        currency: "AUD".into(),
        amount: 4995,
    };
    let created = test.create(amount, "cs-1", "k-create", None).await;
    let id = created.expect("created").id;
    test.confirm(&id, VISA, "k-confirm")
        .await
        .expect("authorized");
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
