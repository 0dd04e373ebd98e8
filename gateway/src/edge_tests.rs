//! The edge layers around handlers that exist only here: a panicking one and
//! one taking a JSON body, so every rejection path is exercised.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::{get, post};
use http_body_util::BodyExt;
use serde::Deserialize;
use tower::ServiceExt;

use crate::middleware::json_body::{ApiJson, MAX_BODY_BYTES};
use crate::with_edge_layers;

#[derive(Deserialize)]
#[allow(dead_code)]
struct Order {
    quantity: u32,
}

async fn boom() -> &'static str {
    panic!("secret detail that must not leak")
}

async fn create(ApiJson(order): ApiJson<Order>) -> String {
    order.quantity.to_string()
}

fn app() -> Router {
    let inner = Router::new()
        .route("/products/boom", get(boom))
        .route("/carts", post(create))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES));
    with_edge_layers(
        inner,
        &crate::cors::CorsConfig::from_env(
            &storefront_platform::env::EnvReader::from_pairs([("APP_ENV", "local")]),
            storefront_platform::env::AppEnvironment::Local,
        )
        .expect("cors"),
        &Default::default(),
        &Default::default(),
    )
}

async fn send(req: Request<Body>) -> (StatusCode, Option<String>, serde_json::Value) {
    let response = app().oneshot(req).await.unwrap();
    let status = response.status();
    let ct = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        ct,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

fn post_body(content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::post("/carts").header("x-api-version", "v1.0");
    if let Some(ct) = content_type {
        b = b.header("content-type", ct);
    }
    b.body(body.into()).unwrap()
}

#[tokio::test]
async fn a_panic_is_a_500_error_body_without_its_message() {
    let req = Request::get("/products/boom")
        .header("x-api-version", "v1.0")
        .body(Body::empty())
        .unwrap();
    let (status, ct, body) = send(req).await;
    assert_eq!(status, 500);
    assert_eq!(ct.as_deref(), Some("application/json"));
    assert_eq!(body["status"], 500);
    assert_eq!(body["type"], "api_error");
    assert!(!body.to_string().contains("secret"));
}

#[tokio::test]
async fn json_bodies_are_checked_in_order() {
    let (status, _, body) = send(post_body(Some("text/plain"), "{\"quantity\":1}")).await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (415, Some("UNSUPPORTED_MEDIA_TYPE"))
    );
    let (status, _, body) = send(post_body(None, "{\"quantity\":1}")).await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (415, Some("UNSUPPORTED_MEDIA_TYPE"))
    );
    let (status, _, body) = send(post_body(Some("application/json"), "{not json")).await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (400, Some("MALFORMED_JSON"))
    );
    let (status, _, body) = send(post_body(
        Some("application/json; charset=utf-8"),
        "{\"quantity\":\"x\"}",
    ))
    .await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (422, Some("VALIDATION_ERROR"))
    );
    assert_eq!(body["errors"][0]["field"], "quantity");
    assert_eq!(body["errors"][0]["code"], "INVALID_FORMAT");
    let big = format!(
        "{{\"quantity\":1,\"pad\":\"{}\"}}",
        "x".repeat(MAX_BODY_BYTES)
    );
    let (status, ct, body) = send(post_body(Some("application/json"), big)).await;
    assert_eq!(
        (status.as_u16(), body["code"].as_str()),
        (413, Some("PAYLOAD_TOO_LARGE"))
    );
    assert_eq!(ct.as_deref(), Some("application/json"));
    let (status, _, _) = send(post_body(Some("application/json"), "{\"quantity\":3}")).await;
    assert_eq!(status, 200);
}
