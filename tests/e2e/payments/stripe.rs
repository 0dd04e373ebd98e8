//! The `stripe` provider against localstripe (PyPI `localstripe`, a
//! stateful Stripe fake the test command installs): PaymentIntents with
//! manual capture, a decline, capture, refunds in part and in whole, a
//! void, 3-D Secure waiting for the shopper; then a checkout paid through the mesh with Stripe out of reach
//! (503, no order) and back (the retry pays, once), Stripe's own signed
//! webhooks taken, and the secret key never in the logs.
//!
//! localstripe declines at charge only its "charge fails" cards
//! (`pm_card_chargeCustomerFail`); `pm_card_visa_chargeDeclined` it
//! declines only when attached to a customer, so the decline here uses the
//! former. It also cannot confirm an intent again after a decline (Stripe
//! can): a decline then another method is tested with the test provider.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::Method;
use storefront_payments::stripe::StripeProvider;
use storefront_payments::{Money, PaymentError, PaymentProvider, PaymentStatus};

use crate::helpers::spawn_mesh_with;
use crate::journey::{Shopper, buyable};

const SECRET_KEY: &str = "sk_test_storefront_e2e_0123456789";
const WEBHOOK_SECRET: &str = "whsec_localstripe_e2e";

/// A localstripe server of its own, stopped when dropped.
struct LocalStripe {
    child: Child,
    url: String,
}

impl Drop for LocalStripe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

impl LocalStripe {
    /// A server on a port of its own. A free port can be taken by another
    /// test between the probe and localstripe's bind: then another port.
    async fn start() -> Self {
        let mut failures = Vec::new();
        for _ in 0..3 {
            match Self::try_start_on(free_port()).await {
                Ok(server) => return server,
                Err(failure) => failures.push(failure),
            }
        }
        panic!("localstripe did not start: {failures:?}");
    }

    /// A server on the port a mesh was already told of.
    async fn start_on(port: u16) -> Self {
        match Self::try_start_on(port).await {
            Ok(server) => server,
            Err(failure) => panic!("localstripe did not start: {failure}"),
        }
    }

    /// Waits for the balance to answer while the process lives: a Python
    /// start on a loaded two-core CI machine has taken over ten seconds.
    async fn try_start_on(port: u16) -> Result<Self, String> {
        let log =
            std::env::temp_dir().join(format!("localstripe-{port}-{}.log", std::process::id()));
        let stderr = std::fs::File::create(&log).expect("a log file for localstripe");
        let child = Command::new("localstripe")
            .args(["--port", &port.to_string(), "--from-scratch"])
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("localstripe on PATH (scripts/test installs it: pip install localstripe)");
        let url = format!("http://127.0.0.1:{port}");
        let mut server = Self { child, url };
        let http = reqwest::Client::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        let failure = loop {
            let balance = http
                .get(format!("{}/v1/balance", server.url))
                .basic_auth(SECRET_KEY, Some(""))
                .send()
                .await;
            if balance.is_ok_and(|r| r.status().is_success()) {
                let _ = std::fs::remove_file(&log);
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                break format!("exited ({status})");
            }
            if tokio::time::Instant::now() > deadline {
                break "no answer in 60 s".to_string();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        drop(server);
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let from = said.char_indices().rev().nth(2000).map_or(0, |(at, _)| at);
        let tail = &said[from..];
        Err(format!("on {port}: {failure}; it said: {tail}"))
    }

    /// Stripe's webhook endpoint, as a shop registers it in its dashboard.
    async fn send_webhooks_to(&self, url: &str) {
        let registered = reqwest::Client::new()
            .post(format!("{}/_config/webhooks/storefront", self.url))
            .form(&[("url", url), ("secret", WEBHOOK_SECRET)])
            .send()
            .await
            .expect("registered");
        assert!(registered.status().is_success());
    }
}

fn aud(amount: i64) -> Money {
    Money {
        currency: "AUD".into(),
        amount,
    }
}

#[tokio::test]
async fn stripe_payment_intents_with_manual_capture_against_localstripe() {
    let server = LocalStripe::start().await;
    let stripe = StripeProvider::new(&server.url, SECRET_KEY, WEBHOOK_SECRET);
    let created = stripe.create(aud(4995), "cs-1", "k-create", None).await;
    let created = created.expect("created");
    assert_eq!(created.status, PaymentStatus::RequiresPaymentMethod);
    assert_eq!(
        (created.reference.as_str(), created.amount.amount),
        ("cs-1", 4995)
    );
    assert!(created.client_secret.is_some());
    let authorized = stripe
        .confirm(&created.id, "pm_card_visa", "k-confirm")
        .await;
    let authorized = authorized.expect("authorized");
    assert_eq!(authorized.status, PaymentStatus::Authorized);
    assert_eq!(
        authorized.amount_captured, 0,
        "manual capture: nothing taken yet"
    );
    let captured = stripe.capture(&created.id, None, "k-capture").await;
    let captured = captured.expect("captured");
    assert_eq!(
        (captured.status, captured.amount_captured),
        (PaymentStatus::Captured, 4995)
    );
    let part = stripe.refund(&created.id, Some(1000), "k-refund-1").await;
    let part = part.expect("refunded in part");
    assert_eq!(
        (part.status, part.amount_refunded),
        (PaymentStatus::Captured, 1000)
    );
    let rest = stripe.refund(&created.id, None, "k-refund-2").await;
    let rest = rest.expect("refunded in whole");
    assert_eq!(
        (rest.status, rest.amount_refunded),
        (PaymentStatus::Refunded, 4995)
    );

    let held = stripe.create(aud(2000), "cs-2", "k2-create", None).await;
    let held = held.expect("created");
    stripe
        .confirm(&held.id, "pm_card_visa", "k2-confirm")
        .await
        .expect("authorized");
    let voided = stripe.void(&held.id, "k2-void").await.expect("voided");
    assert_eq!(voided.status, PaymentStatus::Voided);
    let again = stripe.void(&held.id, "k2-void-again").await;
    assert!(matches!(again, Err(PaymentError::State(_))), "{again:?}");

    let refused = stripe.create(aud(1500), "cs-3", "k3-create", None).await;
    let refused = refused.expect("created");
    let declined = stripe
        .confirm(&refused.id, "pm_card_chargeCustomerFail", "k3-confirm")
        .await;
    assert_eq!(
        declined,
        Err(PaymentError::Declined {
            decline_code: "card_declined".into()
        })
    );
    let after = stripe.get(&refused.id).await.expect("read");
    assert_eq!(after.status, PaymentStatus::RequiresPaymentMethod);
    assert_eq!(after.decline_code.as_deref(), Some("card_declined"));
    let nowhere = stripe.get("pi_nothing_here").await;
    assert!(
        matches!(nowhere, Err(PaymentError::NotFound(_))),
        "{nowhere:?}"
    );
}

/// A card of localstripe's that needs 3-D Secure, as Stripe.js would make
/// it (a PaymentMethod with the card's number).
async fn three_d_secure_card(server: &LocalStripe) -> String {
    let made = reqwest::Client::new()
        .post(format!("{}/v1/payment_methods", server.url))
        .basic_auth(SECRET_KEY, Some(""))
        .form(&[
            ("type", "card"),
            ("card[number]", "4000002760003184"),
            ("card[exp_month]", "12"),
            ("card[exp_year]", "2030"),
            ("card[cvc]", "123"),
        ])
        .send()
        .await
        .expect("a payment method");
    let body: serde_json::Value = made.json().await.expect("its JSON");
    body["id"].as_str().expect("its id").to_string()
}

#[tokio::test]
async fn three_d_secure_with_stripe_waits_for_the_shopper_then_authorizes() {
    let server = LocalStripe::start().await;
    let stripe = StripeProvider::new(&server.url, SECRET_KEY, WEBHOOK_SECRET);
    let card = three_d_secure_card(&server).await;
    let created = stripe.create(aud(3000), "cs-3ds", "k-3ds", None).await;
    let created = created.expect("created");
    let waiting = stripe.confirm(&created.id, &card, "k-3ds-confirm").await;
    let waiting = waiting.expect("waiting for the shopper");
    assert_eq!(waiting.status, PaymentStatus::RequiresAction);
    let action = waiting.next_action.expect("what the shopper does next");
    assert_eq!(
        action.kind, "use_stripe_sdk",
        "Stripe.js handles it with the client secret"
    );
    // The shopper passes the page (Stripe.js; localstripe's own route here).
    let secret = created.client_secret.expect("a client secret");
    let passed = reqwest::Client::new()
        .post(format!(
            "{}/v1/payment_intents/{}/_authenticate",
            server.url, created.id
        ))
        .basic_auth(SECRET_KEY, Some(""))
        .form(&[("client_secret", secret.as_str()), ("success", "true")])
        .send()
        .await
        .expect("authenticated");
    assert!(passed.status().is_success());
    let authorized = stripe.get(&created.id).await.expect("read");
    assert_eq!(authorized.status, PaymentStatus::Authorized);
    assert!(authorized.next_action.is_none());
}

#[tokio::test]
async fn a_checkout_pays_through_stripe_when_it_is_back_and_never_logs_its_key() {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let t = spawn_mesh_with(&[
        ("PAYMENT_PROVIDER", "stripe"),
        ("STRIPE_API_BASE", base.as_str()),
        ("STRIPE_SECRET_KEY", SECRET_KEY),
        ("STRIPE_WEBHOOK_SECRET", WEBHOOK_SECRET),
    ])
    .await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let id = shopper.checkout_one(&products[0].0).await;

    // Stripe out of reach: 503 (the gateway names no downstream), nothing
    // recorded, no order.
    let down = shopper.pay(&id, "pm_card_visa").await;
    down.error(503, "SERVICE_UNAVAILABLE");
    assert!(down.header("retry-after").is_some());
    shopper
        .confirm_only(&id)
        .await
        .error(402, "PAYMENT_REQUIRED");

    let server = LocalStripe::start_on(port).await;
    server
        .send_webhooks_to(&format!("{}/webhooks/payments/stripe", t.base))
        .await;
    let paid = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(paid.status, 201, "{}", paid.body);
    assert_eq!(
        (paid.body["provider"].as_str(), paid.body["status"].as_str()),
        (Some("stripe"), Some("authorized"))
    );
    let confirmed = shopper.confirm_only(&id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().expect("an order");
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    assert_eq!(order.body["payment"]["provider"], "stripe");

    // A declined card: 402 with Stripe's code; the session stays open.
    let other = shopper.checkout_one(&products[1].0).await;
    let declined = shopper.pay(&other, "pm_card_chargeCustomerFail").await;
    declined.error(402, "PAYMENT_DECLINED");
    assert_eq!(declined.body["payment"]["declineCode"], "card_declined");
    let open = shopper
        .send(Method::GET, &format!("/checkout/{other}"), None)
        .await;
    assert_eq!(open.body["status"], "OPEN");

    // localstripe signs and posts its events a second after them.
    let mut applied = false;
    for _ in 0..60 {
        if crate::logs::captured().contains("payment webhook applied") {
            applied = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(applied, "Stripe's signed webhooks were taken");
    assert!(
        !crate::logs::captured().contains(SECRET_KEY),
        "the secret key is never logged"
    );
}
