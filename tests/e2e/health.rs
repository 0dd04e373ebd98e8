//! Probes, and what the gateway answers when a downstream is gone or refuses it.

use reqwest::Method;

use crate::helpers::{spawn_mesh, spawn_mesh_with};

#[tokio::test]
async fn probes_need_no_version_and_readiness_follows_the_catalog() {
    let mut t = spawn_mesh().await;
    let live = t.send(t.request(Method::GET, "/health/live")).await;
    assert_eq!(live.status, 200);
    assert_eq!(live.body["status"], "live");
    let ready = t.send(t.request(Method::GET, "/health/ready")).await;
    assert_eq!(ready.status, 200);
    assert_eq!(ready.body["checks"]["catalog"], "serving");

    t.mesh.stop("catalog").await.expect("catalog stops");
    // Readiness answers from a one-second cache of each downstream's health,
    // so a flood of probes cannot fan out to the services.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;

    let ready = t.send(t.request(Method::GET, "/health/ready")).await;
    ready.error(503, "NOT_READY");
    assert_eq!(ready.field_error(), ("catalog", "UNAVAILABLE"));
    assert!(ready.body["message"].as_str().unwrap().contains("catalog"));
    let live = t.send(t.request(Method::GET, "/health/live")).await;
    assert_eq!(live.status, 200);
    // The orchestrator's readiness: this gateway takes traffic even though
    // one service is down (the rest of the API still works).
    let own = t
        .send(t.request(Method::GET, "/health/ready?downstreams=false"))
        .await;
    assert_eq!(
        (own.status.as_u16(), &own.body["status"]),
        (200, &serde_json::json!("ready"))
    );
    let bad = t
        .send(t.request(Method::GET, "/health/ready?downstreams=maybe"))
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body["code"].is_string() && bad.body["message"].is_string());

    let reply = t.fetch("/products").await;
    reply.error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(reply.body["type"], "api_error");
    assert!(reply.header("correlation-id").is_some());
}

#[tokio::test]
async fn a_downstream_refusing_the_gateway_is_a_502_not_a_401() {
    // Every service admits the cart and search accounts (so the mesh starts)
    // but not the gateway's.
    let callers =
        "cart@storefront.iam.gserviceaccount.com,search@storefront.iam.gserviceaccount.com";
    let t = spawn_mesh_with(&[("ALLOWED_CALLERS", callers)]).await;
    let reply = t.fetch("/products").await;
    reply.error(502, "BAD_GATEWAY");
    assert!(
        !reply.body["message"].as_str().unwrap().contains("gateway@"),
        "the refused identity is not leaked"
    );
}
