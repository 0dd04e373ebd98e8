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

/// The document and the edge agree route by route: a GET documented with
/// validators answers `public`, every other resource answers
/// `private, no-store`, and nothing behind a customer's token is
/// documented as cacheable.
#[tokio::test]
async fn documented_cacheability_is_the_served_one() {
    let t = spawn_mesh().await;
    let doc = t.fetch("/openapi.json").await.body;
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let Some(get) = item.get("get") else { continue };
        let documented = get["responses"]["200"]["headers"].get("ETag").is_some();
        let secured = get["security"].as_array().is_some_and(|s| {
            s.iter()
                .any(|r| r.as_object().is_some_and(|r| !r.is_empty()))
        });
        assert!(
            !(documented && secured),
            "{path}: a customer's answer documented as cacheable"
        );
        // Probes, the document, and the reference's pages (no JSON; their
        // caching is their own: tests/e2e/openapi.rs).
        let pages = path == "/" || path.starts_with("/docs");
        if path.contains('{') || path.starts_with("/health") || path == "/openapi.json" || pages {
            continue;
        }
        let served = t.fetch(path).await;
        let control = served.header("cache-control").unwrap_or_default();
        if documented && served.status != 200 {
            // Refusals are never public (`/search` without a query).
            assert!(!control.starts_with("public"), "{path}: {control}");
        } else if documented {
            assert!(control.starts_with("public, "), "{path}: {control}");
        } else {
            assert_eq!(control, "private, no-store", "{path}");
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} routes checked");
}
