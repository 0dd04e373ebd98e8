//! Many deliveries at once: the cart verifies the ones that arrive
//! together in one call to the payments service, and each delivery still
//! gets its own answer (an order, or its own refusal). A gateway whose
//! cart does not take webhooks (a cart replica older than the gateway, or
//! one the payments service does not verify them for) delivers them in two
//! calls, as before.

use prost::Message;
use serde_json::Value;
use storefront_platform::topology::{CART, GATEWAY, PROGRAMS};

use super::{TEST_SECRET, deliver, event, now_secs, open_session, session};
use crate::both_backends;
use crate::helpers::{TestMesh, spawn_mesh_with};
use crate::journey::Shopper;

const AUTHORIZED: &str = "payment_intent.amount_capturable_updated";

/// `n` shoppers, each with a session paid for (authorized, not confirmed):
/// each shopper, its session and its payment's id.
async fn paid_sessions(t: &TestMesh, n: usize) -> Vec<(Shopper<'_>, String, String)> {
    let mut paid = Vec::new();
    for _ in 0..n {
        let (shopper, id) = open_session(t).await;
        let reply = shopper.pay(&id, "pm_card_visa").await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        let payment = reply.body["id"].as_str().expect("a payment").to_string();
        paid.push((shopper, id, payment));
    }
    paid
}

async fn deliveries_at_once(t: TestMesh) {
    let paid = paid_sessions(&t, 12).await;
    let now = now_secs();
    // Each session's authorization, and a forged copy of every third one,
    // all sent at once.
    let sends = paid.iter().enumerate().flat_map(|(i, (_, _, payment))| {
        let body = event(&format!("evt_{i}"), AUTHORIZED, payment);
        let forged = (i % 3 == 0).then(|| (body.clone(), "whsec_someone_else"));
        [Some((body, TEST_SECRET)), forged].into_iter().flatten()
    });
    let sends: Vec<(Value, &str)> = sends.collect();
    let replies =
        futures::future::join_all(sends.iter().map(|(b, secret)| deliver(&t, b, secret, now)))
            .await;
    for ((body, secret), reply) in sends.iter().zip(&replies) {
        if *secret != TEST_SECRET {
            reply.error(400, "INVALID_SIGNATURE");
            continue;
        }
        assert_eq!(reply.status, 200, "{}", reply.body);
        let payment = &body["data"]["object"]["id"];
        let (shopper, id, _) = (paid.iter())
            .find(|(_, _, p)| p == payment)
            .expect("a session of the payment");
        let shown = session(shopper, id).await;
        assert_eq!(shown["status"], "CONFIRMED", "{shown}");
        assert_eq!(reply.body["orderId"], shown["orderId"], "{}", reply.body);
    }
}
both_backends!(
    deliveries_at_once_are_each_applied_or_refused_alone,
    deliveries_at_once
);

/// Every account may call anything, but `account` every method except
/// `refused`.
fn callers_refusing(account: &str, refused: &[&str]) -> String {
    let set = prost_types::FileDescriptorSet::decode(storefront_proto::FILE_DESCRIPTOR_SET)
        .expect("the descriptor set");
    let methods: Vec<&str> = (set.file.iter())
        .flat_map(|f| f.service.iter())
        .flat_map(|s| s.method.iter())
        .filter_map(|m| m.name.as_deref())
        .filter(|m| !refused.contains(m))
        .collect();
    assert!(methods.contains(&"PaymentChanged") && methods.contains(&"CreatePayment"));
    let others = (PROGRAMS.iter())
        .filter(|p| p.dev_account != account)
        .map(|p| p.dev_account.to_string());
    let restricted = format!("{account}={}", methods.join("|"));
    others.chain([restricted]).collect::<Vec<_>>().join(",")
}

/// The gateway's fallback: a cart that does not take webhooks from it (a
/// replica older than the gateway), or one whose payments service does
/// not verify them for it.
#[tokio::test]
async fn a_cart_that_does_not_take_webhooks_gets_them_in_two_calls() {
    let refusals = [
        (GATEWAY.dev_account, &["PaymentWebhook"][..]),
        (
            CART.dev_account,
            &["VerifyWebhook", "VerifyWebhookBatch"][..],
        ),
    ];
    for (account, refused) in refusals {
        let callers = callers_refusing(account, refused);
        let t = spawn_mesh_with(&[("ALLOWED_CALLERS", callers.as_str())]).await;
        let paid = paid_sessions(&t, 1).await;
        let (shopper, id, payment) = &paid[0];
        let authorized = event("evt_two_calls", AUTHORIZED, payment);
        let now = now_secs();
        deliver(&t, &authorized, "whsec_someone_else", now)
            .await
            .error(400, "INVALID_SIGNATURE");
        let reply = deliver(&t, &authorized, TEST_SECRET, now).await;
        assert_eq!(reply.status, 200, "{account}: {}", reply.body);
        let shown = session(shopper, id).await;
        assert_eq!(shown["status"], "CONFIRMED", "{account}: {shown}");
        assert_eq!(reply.body["orderId"], shown["orderId"]);
    }
}
