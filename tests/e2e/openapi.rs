//! The published contract describes every route the gateway serves.

use reqwest::Method;

use crate::helpers::spawn_mesh;

#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let t = spawn_mesh().await;
    let reply = t.send(t.request(Method::GET, "/openapi.json")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let doc = reply.body;
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/products",
        "/products/{productId}",
        "/products/{productId}/variants",
        "/products/{productId}/variants/{variantId}",
        "/products/{productId}/media",
        "/categories",
        "/categories/tree",
        "/categories/{categoryId}",
        "/collections",
        "/collections/{collectionId}",
        "/health/live",
        "/health/ready",
        "/openapi.json",
        "/auth/login",
        "/auth/token",
        "/auth/logout",
        "/customers",
        "/customers/{customerId}",
        "/customers/{customerId}/addresses",
        "/customers/{customerId}/addresses/{addressId}",
        "/customers/{customerId}/preferences",
        "/customers/{customerId}/orders",
        "/carts",
        "/carts/{cartId}",
        "/carts/{cartId}/line-items",
        "/carts/{cartId}/line-items/{lineItemId}",
        "/checkout",
        "/checkout/{sessionId}",
        "/checkout/{sessionId}/confirm",
        "/orders",
        "/orders/{orderId}",
        "/promotions",
        "/search",
        "/search/suggestions",
        "/content/footer",
        "/content/pages/{slug}",
        "/content/banners",
    ] {
        assert!(paths.contains_key(path), "{path} undocumented");
    }
    let operations = paths.iter().flat_map(|(path, item)| {
        item.as_object()
            .unwrap()
            .iter()
            .filter(|(m, _)| ["get", "put", "post", "delete"].contains(&m.as_str()))
            .map(move |(_, op)| (path, op))
    });
    for (path, op) in operations {
        let params: Vec<&str> = op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert!(params.contains(&"Correlation-Id"), "{path}");
        if path.starts_with("/health") || path == "/openapi.json" {
            continue;
        }
        assert!(params.contains(&"X-Api-Version"), "{path}");
        let responses = op["responses"].as_object().unwrap();
        for status in ["400", "404", "500", "502", "503", "504"] {
            assert!(responses.contains_key(status), "{path} lacks {status}");
        }
        let success = ["200", "201", "204"]
            .iter()
            .find(|s| responses.contains_key(**s))
            .expect("a success status");
        assert!(
            responses[*success]["headers"]["X-Api-Version"].is_object(),
            "{path}"
        );
        if op["security"].is_array() {
            assert!(
                responses.contains_key("401"),
                "{path}: secured operations document 401"
            );
        }
        assert_eq!(
            responses["503"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorBody"
        );
    }
    let products = &paths["/products"]["get"]["parameters"];
    let names: Vec<&str> = products
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for param in [
        "limit", "offset", "sort", "category", "brand", "status", "inStock", "featured",
        "minPrice", "maxPrice", "currency", "filter",
    ] {
        assert!(names.contains(&param), "/products lacks {param}");
    }
    assert!(doc["components"]["securitySchemes"]["BFFToken"].is_object());
    let public = &paths["/products"]["get"]["responses"];
    assert!(public["304"].is_object() && public["200"]["headers"]["ETag"].is_object());
    assert!(
        paths["/customers/{customerId}"]["get"]["responses"]["304"].is_null(),
        "private reads are not cacheable"
    );
}

/// `openapi.json` in the repository is what the gateway serves, so a review
/// sees every contract change; `cargo run --release -- openapi > openapi.json`
/// rewrites it.
#[tokio::test]
async fn the_checked_in_document_is_the_served_one() {
    let t = spawn_mesh().await;
    let served = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
    let checked_in: serde_json::Value = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    assert!(
        served == checked_in,
        "openapi.json differs from what the gateway serves: run \
         `cargo run --release -- openapi > openapi.json` and review the diff"
    );
}
