//! Issue 49 item 3: an agent hears of the orders its buyers placed, as
//! the protocol's webhooks (`openapi.agentic_checkout_webhook.yaml`):
//! `order_create` then `order_update`, each signed in
//! `Merchant-Signature` and verified here, the order validated against
//! the protocol's `Order` schema; a delivery refused is retried.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::hmac;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use reqwest::Method;
use serde_json::{Value, json};

use crate::acp::{
    Agent, SIGNER_KEY, SIGNER_SECRET, agents_with, example, hex, path_of, validated, variant_of,
};
use crate::catalog_changes::internal;
use crate::helpers::{Backend, spawn_mesh_on};
use crate::journey::buyable;

const FULFILMENT: &str = "fulfilment@storefront.iam.gserviceaccount.com";

#[derive(Clone, Default)]
struct Heard {
    /// (Merchant-Signature, body) of every delivery accepted.
    deliveries: Arc<Mutex<Vec<(String, Bytes)>>>,
    refused_first: Arc<Mutex<bool>>,
}

/// Refuses the first delivery (to see it retried), takes the rest.
async fn receive(State(heard): State<Heard>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let mut refused = heard.refused_first.lock().unwrap();
    if !*refused {
        *refused = true;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    let signature = headers
        .get("merchant-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    heard
        .deliveries
        .lock()
        .unwrap()
        .push((signature.to_string(), body));
    StatusCode::OK
}

/// The protocol's check: `t=<seconds>,v1=<hex of HMAC-SHA256(t.body)>`.
fn verified(signature: &str, body: &[u8]) -> bool {
    let Some((t, v1)) = signature
        .strip_prefix("t=")
        .and_then(|s| s.split_once(",v1="))
    else {
        return false;
    };
    let key = hmac::Key::new(hmac::HMAC_SHA256, SIGNER_SECRET.as_bytes());
    let mut signed = format!("{t}.").into_bytes();
    signed.extend_from_slice(body);
    hex(hmac::sign(&key, &signed).as_ref()) == v1
}

async fn until(heard: &Heard, count: usize) -> Vec<Value> {
    for _ in 0..150 {
        let got = heard.deliveries.lock().unwrap().clone();
        if got.len() >= count {
            return got
                .iter()
                .map(|(signature, body)| {
                    assert!(verified(signature, body), "a bad signature: {signature}");
                    serde_json::from_slice(body).unwrap()
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{count} deliveries never came: {:?}",
        heard.deliveries.lock().unwrap()
    );
}

async fn an_agent_hears_of_its_orders(backend: Backend) {
    let heard = Heard::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hooks", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/hooks", post(receive))
        .with_state(heard.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let vars = [
        ("ACP_AGENTS", agents_with(Some(&hook))),
        ("ORDER_WEBHOOK_FIRST_RETRY_MS", "200".to_string()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let t = spawn_mesh_on(backend, &vars).await;
    let product = &buyable(&t, 5).await[0].0;
    let (item, _) = variant_of(&t, product).await;
    let mut agent = Agent::new(&t, SIGNER_KEY, Some(SIGNER_SECRET));
    let create = example("create_checkout_session_request", &item);
    let created = agent
        .post("/acp/checkout_sessions", &create, "hook-create")
        .await;
    assert_eq!(
        created.body["status"], "ready_for_payment",
        "{}",
        created.body
    );
    let session = created.body["id"].as_str().unwrap().to_string();
    let complete = example("complete_checkout_session_request", &item);
    let completed = agent
        .post(
            &format!("{}/complete", path_of(&created.body)),
            &complete,
            "hook-complete",
        )
        .await;
    let order = completed.body["order"]["id"].as_str().unwrap().to_string();
    let moved = t
        .send(
            internal(
                &t,
                FULFILMENT,
                Method::PUT,
                &format!("/internal/orders/{order}/status"),
            )
            .json(&json!({"status": "PROCESSING"})),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);

    // Created, its payment authorized, then processing: the first
    // delivery was refused and came again later (deliveries are not in
    // order); every one is signed and about this session's order.
    let events = until(&heard, 3).await;
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    assert_eq!(
        (of("order_create"), of("order_update")),
        (1, 2),
        "{events:?}"
    );
    for event in &events {
        assert_eq!(event["data"]["id"], order.as_str());
        assert_eq!(event["data"]["checkout_session_id"], session.as_str());
        assert!(
            event["data"]["permalink_url"]
                .as_str()
                .unwrap()
                .contains(&order)
        );
    }
    assert!(
        events.iter().any(|e| e["data"]["status"] == "processing"),
        "{events:?}"
    );
    let orders: Vec<Value> = events
        .iter()
        .map(|e| json!({"def": "Order", "name": e["type"], "value": e["data"]}))
        .collect();
    tokio::task::spawn_blocking(move || validated(orders))
        .await
        .unwrap();
}

mod hooks {
    use super::*;

    #[tokio::test]
    async fn memory() {
        an_agent_hears_of_its_orders(Backend::Memory).await;
    }

    #[tokio::test]
    async fn redis() {
        an_agent_hears_of_its_orders(Backend::Redis).await;
    }
}
