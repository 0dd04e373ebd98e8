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
    ] {
        assert!(paths.contains_key(path), "{path} undocumented");
    }
    for (path, item) in paths {
        let op = &item["get"];
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
        for status in ["200", "400", "404", "500", "502", "503", "504"] {
            assert!(responses.contains_key(status), "{path} lacks {status}");
        }
        assert!(
            responses["200"]["headers"]["X-Api-Version"].is_object(),
            "{path}"
        );
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
}
