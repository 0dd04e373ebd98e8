//! The real captcha verifier through the gateway, against a local stand-in
//! for reCAPTCHA's siteverify (the real one is unreachable from here).

use axum::routing::post;
use axum::{Form, Json, Router};
use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, spawn_mesh_on};

async fn siteverify(
    Form(form): Form<std::collections::HashMap<String, String>>,
) -> Json<serde_json::Value> {
    let ok = form.get("secret").map(String::as_str) == Some("test-secret")
        && form.get("response").map(String::as_str) == Some("human");
    Json(json!({"success": ok, "hostname": "shop.example"}))
}

#[tokio::test]
async fn rejected_captchas_are_422_and_an_unreachable_verifier_is_503() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/siteverify", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(
            listener,
            Router::new().route("/siteverify", post(siteverify)),
        )
        .await
    });
    let vars = [
        ("CAPTCHA_VERIFIER", "recaptcha"),
        ("RECAPTCHA_SECRET", "test-secret"),
        ("RECAPTCHA_VERIFY_URL", url.as_str()),
        ("RECAPTCHA_HOSTNAMES", "shop.example"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    let body = |captcha: &str| json!({"emailAddress": "ava@example.com", "password": "storefront-demo-1", "gRecaptchaResponse": captcha});

    let robot = t
        .send(t.json(Method::POST, "/auth/login", None, &body("robot")))
        .await;
    robot.error(422, "VALIDATION_ERROR");
    assert_eq!(robot.field_error(), ("gRecaptchaResponse", "INVALID_VALUE"));
    let human = t
        .send(t.json(Method::POST, "/auth/login", None, &body("human")))
        .await;
    assert_eq!(human.status, 200, "{}", human.body);

    server.abort();
    let _ = server.await;
    let down = t
        .send(t.json(Method::POST, "/auth/login", None, &body("human")))
        .await;
    down.error(503, "SERVICE_UNAVAILABLE");
}
