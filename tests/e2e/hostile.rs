//! Hostile input through the gateway: every request below is answered 4xx
//! in the spec's error shape, never 500, never a hang, and the process's
//! memory comes back once the sweep is over.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Api, spawn_mesh};

const MIB: usize = 1024 * 1024;

fn rss_mb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

/// Sends `request` with a deadline; asserts a 4xx in the spec's shape.
async fn refused(t: &Api, what: &str, request: reqwest::RequestBuilder) {
    let response = tokio::time::timeout(Duration::from_secs(20), request.send())
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 20 s"))
        .unwrap_or_else(|e| panic!("{what}: {}", e.without_url()));
    let status = response.status();
    let bytes = response.bytes().await.unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| panic!("{what}: {status} with a body that is not JSON"));
    let shown: String = body.to_string().chars().take(300).collect();
    assert!(status.is_client_error(), "{what}: {status} {shown}");
    assert_eq!(body["status"], status.as_u16(), "{what}: {shown}");
    for field in ["message", "code", "type"] {
        assert!(body[field].is_string(), "{what}: no {field} in {shown}");
    }
    let _ = t;
}

async fn session(t: &Api) -> String {
    t.new_session().await["accessToken"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn hostile_input_is_refused_in_the_spec_s_shape() {
    let t = spawn_mesh().await;
    let token = session(&t).await;
    let before = rss_mb();
    let big = "x".repeat(MIB);
    let json_post = |path: &str, body: String| {
        t.request(Method::POST, path)
            .header("X-Api-Version", "v1.0")
            .header("X-BFF-Token", &token)
            .header("Content-Type", "application/json")
            .body(body)
    };

    // Headers.
    refused(
        &t,
        "a 64 KiB header",
        t.get("/products")
            .header("X-Padding", "a".repeat(64 * 1024)),
    )
    .await;
    refused(
        &t,
        "a 64 KiB version header",
        t.request(Method::GET, "/products")
            .header("X-Api-Version", "v".repeat(64 * 1024)),
    )
    .await;
    // Bodies.
    refused(
        &t,
        "a 10 MB body",
        json_post("/carts", "[".repeat(10 * MIB)),
    )
    .await;
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    refused(&t, "deeply nested JSON", json_post("/carts", nested)).await;
    refused(
        &t,
        "NUL bytes in a JSON string",
        json_post("/customers/me/addresses", json!({"firstName": "A\u{0}", "lastName": "B", "streetName": "C", "city": "D", "postalCode": "2000", "country": "AU"}).to_string()),
    )
    .await;
    refused(
        &t,
        "a number beyond i64",
        json_post(
            "/carts/x/line-items",
            r#"{"productId":"p","variantId":99999999999999999999999,"quantity":1}"#.into(),
        ),
    )
    .await;
    for (path, fields) in [
        (
            "/customers/me/addresses",
            &[
                "firstName",
                "lastName",
                "streetName",
                "city",
                "postalCode",
                "country",
            ][..],
        ),
        (
            "/auth/login",
            &["emailAddress", "password", "gRecaptchaResponse"][..],
        ),
        (
            "/customers",
            &[
                "emailAddress",
                "password",
                "firstName",
                "lastName",
                "gRecaptchaResponse",
            ][..],
        ),
        ("/checkout", &["cartId", "shippingAddressId"][..]),
    ] {
        for field in fields {
            let mut body = serde_json::Map::new();
            body.insert(
                (*field).to_string(),
                Value::String(big[..MIB - 64].to_string()),
            );
            let what = format!("a 1 MiB {field} to {path}");
            refused(&t, &what, json_post(path, Value::Object(body).to_string())).await;
        }
    }
    // Paths and queries.
    for path in [
        "/products/%FF%FE",
        "/products?brand=%FF%FE",
        "/search?query=%FF%FE",
        "/products?limit=1&limit=2",
        "/products?limit=",
        "/products?offset=99999999999999999999999",
        "/products?limit=-1",
        "/products?filter%5Bprice%5Bgt%5D%5D=99999999999999999999999",
        "/search?query=shirt%00",
        "/categories/%00",
        "/products?sort=",
    ] {
        refused(&t, path, t.get(path)).await;
    }
    let long_query = format!("/products?brand={}", "b".repeat(32 * 1024));
    refused(&t, "a 32 KiB query value", t.get(&long_query)).await;

    // Memory comes back: nothing kept per hostile request.
    drop(big);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_mb();
    assert!(
        after < before + 200,
        "RSS grew from {before} MB to {after} MB"
    );
}
