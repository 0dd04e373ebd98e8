//! The published contract describes every route the gateway serves.

use reqwest::Method;
use serde_json::Value;

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
        "/markets",
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
        "/checkout/{sessionId}/payment",
        "/webhooks/payments/{provider}",
        "/payments/test/{paymentId}/authenticate",
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
        // Probes, the document and its reference page (and the root that
        // leads there), and what providers and their pages call
        // (docs/payments.md): no API version.
        let operational = [
            "/health",
            "/openapi.json",
            "/docs",
            "/media/demo/",
            "/webhooks/",
            "/payments/test/",
        ];
        if path == "/" || operational.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        assert!(params.contains(&"X-Api-Version"), "{path}");
        let responses = op["responses"].as_object().unwrap();
        for status in ["400", "404", "500", "502", "503", "504"] {
            assert!(responses.contains_key(status), "{path} lacks {status}");
        }
        let success = ["200", "201", "202", "204"]
            .iter()
            .find(|s| responses.contains_key(**s))
            .expect("a success status");
        assert!(
            responses[*success]["headers"]["X-Api-Version"].is_object(),
            "{path}"
        );
        // Every operation states its security; `[]` is "no token needed".
        let security = op["security"].as_array().expect("security stated");
        if !security.is_empty() {
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

/// A value the document's schema admits, for a filter field or parameter.
fn sample(schema: &serde_json::Value) -> String {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.as_str().unwrap().to_string();
    }
    // A choice written as a pattern: `^(active|inactive)$`.
    if let Some(choices) = schema["pattern"]
        .as_str()
        .and_then(|p| p.strip_prefix("^(")?.strip_suffix(")$"))
    {
        return choices.split('|').next().unwrap().to_string();
    }
    match (schema["type"].as_str(), schema["format"].as_str()) {
        (Some("integer"), _) => schema["minimum"].as_i64().unwrap_or(0).max(0).to_string(),
        (Some("boolean"), _) => "true".into(),
        (Some("string"), Some("date-time")) => "2026-01-01T00:00:00+10:00".into(),
        (Some("string"), _) => "x".into(),
        other => panic!("a filter value of type {other:?}"),
    }
}

/// Every `filter[<field>]` the document admits (its properties, and the
/// attribute names its `propertyNames` adds) is accepted, typed as the
/// document says, and only those: the schema comes from the same table
/// the gateway validates with. (Found by the contract run: the filter
/// names and values used to be documented as free strings.)
#[tokio::test]
async fn documented_filter_fields_are_exactly_the_accepted_ones() {
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let session = t.new_session().await;
    let token = session["accessToken"].as_str().unwrap();
    for (path, extra) in [
        ("/products", ""),
        ("/search", "query=shirt&"),
        ("/orders", ""),
    ] {
        let params = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
        let filter = params.iter().find(|p| p["name"] == "filter").unwrap();
        let schema = &filter["schema"];
        match schema["propertyNames"]["pattern"].as_str() {
            None => assert_eq!(schema["additionalProperties"], false, "{path}"),
            // Beyond the properties: one attribute's name each, valued as
            // `additionalProperties` says.
            Some(names) => {
                assert!(
                    names.ends_with(r"|attributes\.[A-Za-z0-9_-]{1,64})$"),
                    "{names}"
                );
                assert!(!names.contains("noSuchField"));
                let value = sample(&schema["additionalProperties"]);
                let url = format!("{path}?{extra}filter%5Battributes.colour%5D={value}");
                let reply = t.send(t.authed(Method::GET, &url, token)).await;
                assert_eq!(reply.status, 200, "{url}: {}", reply.body);
            }
        }
        let fields = schema["properties"].as_object().unwrap();
        assert!(!fields.is_empty(), "{path}");
        for (field, value_schema) in fields {
            let value = sample(value_schema).replace('+', "%2B");
            let url = format!("{path}?{extra}filter%5B{field}%5D={value}");
            let reply = t.send(t.authed(Method::GET, &url, token)).await;
            assert_eq!(reply.status, 200, "{url}: {}", reply.body);
        }
        let url = format!("{path}?{extra}filter%5BnoSuchField%5D=1");
        let reply = t.send(t.authed(Method::GET, &url, token)).await;
        reply.error(400, "INVALID_FILTER");
    }
}

/// Every explicit filter parameter the gateway reads (`brand`,
/// `minPrice`, `isDefault`, ...) is documented, typed as it is read:
/// a documented sample value is accepted, and nothing undocumented is.
#[tokio::test]
async fn documented_explicit_filters_are_the_accepted_ones() {
    use storefront_domain::query::vocabulary::{ADDRESSES, PRODUCTS};
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let session = t.new_session().await;
    let token = session["accessToken"].as_str().unwrap();
    for (path, extra, spec) in [
        ("/products", "", &PRODUCTS),
        ("/search", "query=shirt&", &PRODUCTS),
        ("/customers/me/addresses", "", &ADDRESSES),
    ] {
        let documented = if path.starts_with("/customers") {
            "/customers/{customerId}/addresses"
        } else {
            path
        };
        let params = doc["paths"][documented]["get"]["parameters"]
            .as_array()
            .unwrap();
        for e in spec.explicit {
            let param = params
                .iter()
                .find(|p| p["name"] == e.param)
                .unwrap_or_else(|| panic!("{path} documents {}", e.param));
            assert_eq!(param["description"], e.description, "{path} {}", e.param);
            let value = sample(&param["schema"]).replace('+', "%2B");
            let url = format!("{path}?{extra}{}={value}", e.param);
            let reply = t.send(t.authed(Method::GET, &url, token)).await;
            assert_eq!(reply.status, 200, "{url}: {}", reply.body);
        }
    }
}

/// The document's links chain a shopper's path (cart -> line items ->
/// checkout -> confirm -> order), and each one names a real operation and
/// parameters that operation has.
#[tokio::test]
async fn links_chain_the_journey_and_point_at_real_parameters() {
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let mut operations = std::collections::HashMap::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            if let Some(id) = op["operationId"].as_str() {
                operations.insert(id.to_string(), op.clone());
            }
        }
    }
    let mut edges = Vec::new();
    for (from, op) in &operations {
        for response in op["responses"].as_object().unwrap().values() {
            let Some(links) = response["links"].as_object() else {
                continue;
            };
            for link in links.values() {
                let to = link["operationId"].as_str().unwrap();
                let target = &operations[to];
                let names: Vec<&str> = target["parameters"]
                    .as_array()
                    .map(|p| p.iter().filter_map(|p| p["name"].as_str()).collect())
                    .unwrap_or_default();
                for name in link["parameters"].as_object().into_iter().flatten() {
                    assert!(
                        names.contains(&name.0.as_str()),
                        "{from} -> {to}: {}",
                        name.0
                    );
                }
                edges.push((from.clone(), to.to_string()));
            }
        }
    }
    for (from, to) in [
        ("create_cart", "add_line_item"),
        ("add_line_item", "update_line_item"),
        ("add_line_item", "create_checkout"),
        ("create_address", "create_checkout"),
        ("create_checkout", "confirm_checkout"),
        ("confirm_checkout", "get_order"),
        ("get_order", "update_order"),
    ] {
        assert!(
            edges.contains(&(from.to_string(), to.to_string())),
            "no link {from} -> {to}"
        );
    }
}

/// Every operation that takes a body documents the answers about the body
/// itself (a too-large one is 413, a non-JSON one 415), as the gateway
/// gives them.
#[tokio::test]
async fn operations_with_a_body_document_413_and_415() {
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let mut with_body = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op["requestBody"].is_object() {
                with_body += 1;
                for status in ["413", "415"] {
                    assert!(
                        op["responses"][status].is_object(),
                        "{method} {path} lacks {status}"
                    );
                }
            }
        }
    }
    assert!(with_body > 10, "{with_body}");
    let big = vec![b'a'; (1 << 20) + 1];
    let reply = t
        .send(
            t.request(Method::POST, "/carts")
                .header("X-Api-Version", "v1.0")
                .header("content-type", "application/json")
                .body(big),
        )
        .await;
    reply.error(413, "PAYLOAD_TOO_LARGE");
}

/// Where the document states the paging limits of the shared query
/// evaluator, it states the ones the services enforce.
#[tokio::test]
async fn documented_page_limits_are_the_enforced_ones() {
    use storefront_domain::query::{DEFAULT_LIMIT, MAX_LIMIT};
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let mut stated = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["name"] == "limit" && p["schema"]["maximum"] == MAX_LIMIT {
                    assert_eq!(p["schema"]["default"], DEFAULT_LIMIT, "{p}");
                    stated += 1;
                }
            }
        }
    }
    assert!(stated >= 5, "{stated}");
    let over = t.fetch(&format!("/products?limit={}", MAX_LIMIT + 1)).await;
    over.error(400, "INVALID_QUERY_PARAMETER");
}

/// Login's texts are documented as the server checks them: a blank
/// address or an empty password is a field error, so the schema says
/// they cannot be; an address of 254 characters that are several bytes
/// each is within the documented length and reaches the password check.
/// (Found by the contract run: `{"emailAddress": ""}` was schema-valid.)
#[tokio::test]
async fn login_fields_are_documented_as_enforced() {
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let login = &doc["components"]["schemas"]["LoginBody"]["properties"];
    assert_eq!(login["emailAddress"]["minLength"], 1, "{login}");
    assert_eq!(login["emailAddress"]["pattern"], r"\S", "{login}");
    assert_eq!(login["password"]["minLength"], 1, "{login}");
    let max = login["emailAddress"]["maxLength"].as_u64().unwrap() as usize;

    let attempt = |email: String, password: &str| {
        let body = serde_json::json!({
            "emailAddress": email, "password": password, "gRecaptchaResponse": "dev-ok",
        });
        t.json(Method::POST, "/auth/login", None, &body)
    };
    let blank = t.send(attempt("  ".into(), "x")).await;
    blank.error(422, "VALIDATION_ERROR");
    assert_eq!(blank.field_error(), ("emailAddress", "REQUIRED"));
    let empty = t.send(attempt("a@example.com".into(), "")).await;
    empty.error(422, "VALIDATION_ERROR");
    assert_eq!(empty.field_error(), ("password", "REQUIRED"));

    let wide = format!("{}@example.com", "é".repeat(max - 12));
    assert_eq!(wide.chars().count(), max);
    t.send(attempt(wide.clone(), "x"))
        .await
        .error(401, "INVALID_CREDENTIALS");
    let reply = t.send(attempt(format!("é{wide}"), "x")).await;
    reply.error(422, "VALIDATION_ERROR");
    assert_eq!(reply.field_error(), ("emailAddress", "TOO_LONG"));
}

/// `schema` itself, or the component its `$ref` names.
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema,
    }
}

/// A required id or token refused when empty is documented with
/// `minLength: 1`, so that no schema-valid body is answered 422 REQUIRED.
/// (A contract run sent `"refreshToken": ""` to `/auth/token`.)
#[tokio::test]
async fn empty_required_strings_are_documented_as_refused() {
    let t = spawn_mesh().await;
    let doc = t.send(t.request(Method::GET, "/openapi.json")).await.body;
    let session = t.new_session().await;
    let token = session["accessToken"].as_str().unwrap();
    let cases = [
        (
            "TokenBody",
            "/auth/token",
            "refreshToken",
            serde_json::json!({"grantType": "refresh_token", "refreshToken": ""}),
        ),
        (
            "CheckoutBody",
            "/checkout",
            "cartId",
            serde_json::json!({"cartId": "", "shippingAddressId": "a"}),
        ),
        (
            "CheckoutBody",
            "/checkout",
            "shippingAddressId",
            serde_json::json!({"cartId": "c", "shippingAddressId": ""}),
        ),
        (
            "AddLineItemBody",
            "/carts/any/line-items",
            "productId",
            serde_json::json!({"productId": "", "quantity": 1}),
        ),
    ];
    for (schema, path, field, body) in cases {
        let property = &doc["components"]["schemas"][schema]["properties"][field];
        let property = resolved(&doc, property);
        assert_eq!(property["minLength"], 1, "{schema}.{field}: {property}");
        let reply = t.send(t.json(Method::POST, path, Some(token), &body)).await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(reply.field_error(), (field, "REQUIRED"), "{path}");
    }
}

/// The reference: `/` leads to `/docs` locally; the page loads Redoc from
/// this origin under a policy that allows nothing else; the bundle is
/// cached and revalidated by its tag.
#[tokio::test]
async fn the_reference_is_served_from_the_gateway_itself() {
    let t = crate::helpers::spawn_mesh().await;
    let unfollowed = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = unfollowed.get(format!("{}/", t.base)).send().await.unwrap();
    assert_eq!(root.status(), 307);
    assert_eq!(root.headers()["location"], "/docs");
    let page = t.http.get(format!("{}/docs", t.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        policy.starts_with("default-src 'none'; script-src 'self'"),
        "{policy}"
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("spec-url=\"/openapi.json\""), "{html}");
    assert!(
        !html.contains("https://"),
        "nothing from another origin: {html}"
    );
    let script = format!("{}/docs/redoc.standalone.js", t.base);
    let bundle = t.http.get(&script).send().await.unwrap();
    assert_eq!(bundle.status(), 200);
    let tag = bundle.headers()["etag"].clone();
    assert!(bundle.bytes().await.unwrap().len() > 1_000_000);
    let again = t
        .http
        .get(&script)
        .header("If-None-Match", tag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
}
