//! The cross-cutting layer: versions, correlation ids, error shapes for
//! paths, methods and sizes.

use reqwest::Method;

use crate::helpers::spawn_mesh;

#[tokio::test]
async fn the_version_header_is_required_validated_and_echoed() {
    let t = spawn_mesh().await;
    let reply = t.send(t.request(Method::GET, "/products")).await;
    reply.error(400, "INVALID_API_VERSION");
    assert_eq!(reply.field_error(), ("X-Api-Version", "REQUIRED"));
    assert_eq!(reply.body["type"], "validation_error");

    for bad in ["v1", "1.0", "v1.0.1", "version1", "v1.x", ""] {
        let reply = t
            .send(
                t.request(Method::GET, "/products")
                    .header("X-Api-Version", bad),
            )
            .await;
        reply.error(400, "INVALID_API_VERSION");
        assert_eq!(
            reply.field_error(),
            ("X-Api-Version", "INVALID_FORMAT"),
            "{bad:?}"
        );
    }
    for unsupported in ["v2.0", "v0.9", "v3.1"] {
        let reply = t
            .send(
                t.request(Method::GET, "/products")
                    .header("X-Api-Version", unsupported),
            )
            .await;
        reply.error(400, "INVALID_API_VERSION");
        assert_eq!(reply.field_error(), ("X-Api-Version", "UNSUPPORTED"));
    }
    let reply = t
        .send(
            t.request(Method::GET, "/products?limit=1")
                .header("X-Api-Version", "v1.7"),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("x-api-version"), Some("v1.7"));
    assert_eq!(reply.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn a_path_version_wins_and_unknown_ones_are_404() {
    let t = spawn_mesh().await;
    let plain = t.ok("/products?limit=3").await;
    let versioned = t.ok("/products/v1?limit=3").await;
    assert_eq!(plain, versioned);
    let reply = t.fetch("/products/v2").await;
    reply.error(404, "UNSUPPORTED_VERSION");
    assert_eq!(reply.body["type"], "not_found_error");
    assert_eq!(reply.header("x-api-version"), Some("v1.0"));
    let tree = t.ok("/categories/tree").await;
    assert!(tree["roots"].is_array());
}

#[tokio::test]
async fn correlation_ids_are_echoed_or_generated() {
    let t = spawn_mesh().await;
    let sent = "5f0c6f55-3d4c-4e0b-9a53-7bb4b8a31e11";
    let reply = t
        .send(t.get("/products?limit=1").header("Correlation-Id", sent))
        .await;
    assert_eq!(reply.header("correlation-id"), Some(sent));

    let a = t.fetch("/products?limit=1").await;
    let b = t.fetch("/products?limit=1").await;
    let (a, b) = (
        a.header("correlation-id").unwrap(),
        b.header("correlation-id").unwrap(),
    );
    assert_ne!(a, b);
    assert_eq!(uuid::Uuid::parse_str(a).unwrap().get_version_num(), 4);

    let reply = t
        .send(
            t.get("/products?limit=1")
                .header("Correlation-Id", "not-a-uuid"),
        )
        .await;
    let generated = reply.header("correlation-id").unwrap();
    assert_ne!(generated, "not-a-uuid");
    assert!(uuid::Uuid::parse_str(generated).is_ok());

    // Errors carry it too.
    let reply = t
        .send(
            t.request(Method::GET, "/products")
                .header("Correlation-Id", sent),
        )
        .await;
    assert_eq!(reply.header("correlation-id"), Some(sent));
}

#[tokio::test]
async fn unknown_paths_wrong_methods_and_big_bodies_get_error_bodies() {
    let t = spawn_mesh().await;
    let reply = t.fetch("/no/such/thing").await;
    reply.error(404, "NOT_FOUND");
    assert_eq!(reply.body["type"], "not_found_error");

    let reply = t
        .send(
            t.request(Method::DELETE, "/products")
                .header("X-Api-Version", "v1.0"),
        )
        .await;
    reply.error(405, "METHOD_NOT_ALLOWED");
    let allow = reply.header("allow").expect("Allow header");
    assert!(allow.contains("GET"), "{allow}");

    let reply = t
        .send(
            t.request(Method::POST, "/categories")
                .header("X-Api-Version", "v1.0")
                .header("Content-Type", "text/plain")
                .body("x"),
        )
        .await;
    reply.error(405, "METHOD_NOT_ALLOWED");

    let big = vec![b'{'; 1024 * 1024 + 1];
    let reply = t
        .send(
            t.request(Method::POST, "/products")
                .header("X-Api-Version", "v1.0")
                .header("Content-Type", "application/json")
                .body(big),
        )
        .await;
    reply.error(413, "PAYLOAD_TOO_LARGE");
    assert!(reply.header("correlation-id").is_some());
}

/// Issue 44 item 12: every answer, success, error or preflight, carries
/// `X-Content-Type-Options: nosniff` and a policy that loads nothing.
#[tokio::test]
async fn every_answer_says_nosniff() {
    let t = spawn_mesh().await;
    let preflight = t
        .request(Method::OPTIONS, "/products")
        .header("Origin", "http://127.0.0.1:8000")
        .header("Access-Control-Request-Method", "GET")
        .send()
        .await
        .unwrap();
    let mut headers = vec![preflight.headers().clone()];
    for path in [
        "/products?limit=1",
        "/no-such-path",
        "/health/live",
        "/openapi.json",
    ] {
        headers.push(t.fetch(path).await.headers);
    }
    headers.push(t.send(t.request(Method::GET, "/products")).await.headers);
    for h in headers {
        assert_eq!(h["x-content-type-options"], "nosniff", "{h:?}");
        assert_eq!(
            h["content-security-policy"],
            "default-src 'none'; frame-ancestors 'none'"
        );
    }
}
