//! HTTP caching: public GETs are cacheable with a strong ETag and answer 304
//! to a matching If-None-Match; anything tied to a customer never is.

use reqwest::Method;

use crate::helpers::{Backend, spawn_mesh, spawn_mesh_on};

#[tokio::test]
async fn public_reads_carry_validators_and_answer_304() {
    let t = spawn_mesh().await;
    let first = t.fetch("/products?limit=2").await;
    assert_eq!(
        first.header("cache-control"),
        Some("public, max-age=60, stale-while-revalidate=300")
    );
    assert_eq!(first.header("vary"), Some("X-Api-Version"));
    let etag = first.header("etag").expect("an ETag").to_string();
    assert!(
        etag.starts_with('"') && !etag.starts_with("W/"),
        "strong: {etag}"
    );
    let again = t.fetch("/products?limit=2").await;
    assert_eq!(
        again.header("etag"),
        Some(etag.as_str()),
        "same representation, same tag"
    );

    let revalidated = t
        .send(t.get("/products?limit=2").header("If-None-Match", &etag))
        .await;
    assert_eq!(revalidated.status, 304);
    assert!(revalidated.body.is_null(), "no body");
    assert_eq!(revalidated.header("etag"), Some(etag.as_str()));
    assert!(revalidated.header("correlation-id").is_some());
    let listed = t
        .send(
            t.get("/products?limit=2")
                .header("If-None-Match", format!("\"stale\", {etag}")),
        )
        .await;
    assert_eq!(listed.status, 304);
    let changed = t
        .send(t.get("/products?limit=3").header("If-None-Match", &etag))
        .await;
    assert_eq!(changed.status, 200);

    let content = t.fetch("/content/footer").await;
    assert_eq!(
        content.header("cache-control"),
        Some("public, max-age=300, stale-while-revalidate=3600")
    );
    let search = t.fetch("/search?query=shirt").await;
    assert_eq!(
        search.header("cache-control"),
        Some("public, max-age=30, stale-while-revalidate=60")
    );
    let missing = t.fetch("/products/nope").await;
    assert!(missing.header("etag").is_none());
    assert_ne!(
        missing.header("cache-control"),
        Some("public, max-age=60, stale-while-revalidate=300")
    );
}

#[tokio::test]
async fn customer_answers_are_never_cacheable() {
    let t = spawn_mesh().await;
    let session = t.new_session().await;
    let token = session["accessToken"].as_str().unwrap();
    for path in ["/customers/me", "/customers/me/addresses", "/orders"] {
        let reply = t.send(t.authed(Method::GET, path, token)).await;
        assert_eq!(
            reply.header("cache-control"),
            Some("private, no-store"),
            "{path}"
        );
        assert!(reply.header("etag").is_none(), "{path}");
    }
    let cart = t.send(t.authed(Method::POST, "/carts", token)).await;
    assert_eq!(cart.header("cache-control"), Some("private, no-store"));
}

#[tokio::test]
async fn freshness_is_configured_per_group() {
    let t = spawn_mesh_on(Backend::Memory, &[("CACHE_CATALOG", "5,10")]).await;
    assert_eq!(
        t.fetch("/categories").await.header("cache-control"),
        Some("public, max-age=5, stale-while-revalidate=10")
    );
}
