//! The shop changes its catalog live on the internal port: a product put
//! and deleted, stock levels, a whole feed imported (or checked), the
//! catalog exported. Listings and detail follow at once, search within
//! 2 s, carts at checkout.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Reply, TestMesh};
use crate::journey::Shopper;

pub const MERCHANDISING: &str = "merchandising@storefront.iam.gserviceaccount.com";

/// A request to the internal port as `account`.
pub fn internal(
    t: &TestMesh,
    account: &str,
    method: Method,
    path: &str,
) -> reqwest::RequestBuilder {
    let token = t.mesh.issuer.mint(account, "gateway-internal").unwrap();
    let url = format!("http://{}{path}", t.mesh.internal_addr);
    t.http.request(method, url).bearer_auth(token)
}

async fn put(t: &TestMesh, id: &str, record: &Value) -> Reply {
    let path = format!("/internal/catalog/products/{id}");
    t.send(internal(t, MERCHANDISING, Method::PUT, &path).json(record))
        .await
}

async fn stock(t: &TestMesh, changes: Value) -> Reply {
    let request = internal(t, MERCHANDISING, Method::POST, "/internal/catalog/stock");
    t.send(request.json(&json!({ "changes": changes }))).await
}

/// Waits (2 s at most, the bound promised) until search for `text` finds
/// `total` products.
async fn search_finds(t: &TestMesh, text: &str, total: u64) {
    let mut found = Value::Null;
    for _ in 0..20 {
        found = t.ok(&format!("/search?query={text}")).await;
        if found["total"] == total {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("search for {text} did not find {total} within 2 s: {found}");
}

fn lamp(category: &Value, cents: i64) -> Value {
    json!({
        "key": "zanzibar-lamp", "name": {"en-AU": "Zanzibar Lamp"}, "brand": "Lumen",
        "categoryId": category,
        "variants": [{"id": 1, "sku": "ZL-1", "prices": [{"currencyCode": "AUD", "centAmount": cents}], "availability": {"quantity": 4}}]
    })
}

async fn a_product_changes_everywhere(t: TestMesh) {
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    let listed = format!("/products?category={}&limit=1", category.as_str().unwrap());
    let in_category = async |t: &TestMesh| t.ok(&listed).await["total"].as_u64().unwrap();
    let before = in_category(&t).await;
    let created = put(&t, "p-zanzibar", &lamp(&category, 5000)).await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_eq!(created.body["products"][0]["version"], 1);
    let version = created.body["catalogVersion"].as_u64().unwrap();
    assert_eq!(
        t.ok("/products/p-zanzibar").await["price"]["centAmount"],
        5000
    );
    assert_eq!(in_category(&t).await, before + 1, "listings follow at once");
    search_finds(&t, "zanzibar", 1).await;

    // A shopper holds it; then its price changes: checkout says so.
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    assert_eq!(shopper.add(&cart, "p-zanzibar", 1, 1).await.status, 200);
    let session = shopper.checkout(&cart).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut dearer = lamp(&category, 6500);
    dearer["version"] = json!(1);
    let replaced = put(&t, "p-zanzibar", &dearer).await;
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    assert_eq!(replaced.body["products"][0]["version"], 2);
    assert!(replaced.body["catalogVersion"].as_u64().unwrap() > version);
    put(&t, "p-zanzibar", &dearer)
        .await
        .error(409, "CONCURRENT_MODIFICATION");
    assert_eq!(
        t.ok("/products/p-zanzibar").await["price"]["centAmount"],
        6500
    );
    shopper.confirm(&session).await.error(409, "CART_REPRICED");

    // Stock: at once, together or not at all.
    let sold_out = stock(&t, json!([{"sku": "ZL-1", "quantity": 0}])).await;
    assert_eq!(sold_out.status, 200, "{}", sold_out.body);
    assert_eq!(t.ok("/products/p-zanzibar").await["inStock"], false);
    let refused = stock(
        &t,
        json!([{"sku": "ZL-1", "quantity": 3}, {"sku": "ZL-1", "delta": -9}]),
    )
    .await;
    refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.field_error(), ("changes[1].delta", "OUT_OF_RANGE"));
    assert_eq!(
        t.ok("/products/p-zanzibar").await["inStock"],
        false,
        "nothing applied"
    );
    let restocked = stock(&t, json!([{"sku": "ZL-1", "delta": 2}])).await;
    assert_eq!(
        restocked.body["products"][0]["variants"][0]["availability"]["quantity"],
        2
    );

    // Deleted: gone from detail, its category and search; a cart holding
    // it cannot check out.
    let path = "/internal/catalog/products/p-zanzibar";
    let deleted = t
        .send(internal(&t, MERCHANDISING, Method::DELETE, path))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    t.fetch("/products/p-zanzibar")
        .await
        .error(404, "NOT_FOUND");
    assert_eq!(in_category(&t).await, before);
    search_finds(&t, "zanzibar", 0).await;
    shopper.checkout(&cart).await.error(409, "LINE_UNAVAILABLE");
}
both_backends!(
    a_product_changes_everywhere_live,
    a_product_changes_everywhere
);

pub async fn export_lines(t: &TestMesh) -> Vec<String> {
    let reply = internal(t, MERCHANDISING, Method::GET, "/internal/catalog/export")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "application/x-ndjson");
    let text = reply.text().await.unwrap();
    text.lines().map(str::to_string).collect()
}

pub async fn import(t: &TestMesh, feed: String, dry_run: bool) -> Reply {
    let path = format!("/internal/catalog/import?dryRun={dry_run}");
    let request = internal(t, MERCHANDISING, Method::POST, &path)
        .header("content-type", "application/x-ndjson")
        .body(feed);
    t.send(request).await
}

async fn a_feed_is_imported_whole_or_not_at_all(t: TestMesh) {
    let lines = export_lines(&t).await;
    let products = lines
        .iter()
        .filter(|l| l.contains(r#""type":"product""#))
        .count();
    assert_eq!(products, 1000);
    let whole = lines.join("\n");
    let checked = import(&t, whole.clone(), true).await;
    assert_eq!(checked.status, 200, "{}", checked.body);
    let counts = |body: &Value| {
        ["applied", "toCreate", "toUpdate", "unchanged", "toDelete"].map(|k| body[k].clone())
    };
    assert_eq!(
        counts(&checked.body),
        [json!(false), json!(0), json!(0), json!(1000), json!(0)],
        "the catalog's own export changes nothing"
    );
    let version = checked.body["catalogVersion"].clone();

    // A dry run counts as updated only the products whose record changes.
    let mut repriced: Vec<String> = lines.clone();
    let first_product = repriced
        .iter()
        .position(|l| l.contains(r#""type":"product""#))
        .expect("a product line");
    repriced[first_product] =
        repriced[first_product].replacen(r#""centAmount":"#, r#""centAmount":1"#, 1);
    let checked = import(&t, repriced.join("\n"), true).await;
    assert_eq!(checked.status, 200, "{}", checked.body);
    assert_eq!(
        counts(&checked.body),
        [json!(false), json!(0), json!(1), json!(999), json!(0)]
    );

    // One bad line refuses the whole feed; the catalog stays as it was.
    let mut bad: Vec<String> = lines.clone();
    bad[60] = bad[60].replace(r#""currencyCode":"AUD""#, r#""currencyCode":"GBP""#);
    let refused = import(&t, bad.join("\n"), false).await;
    refused.error(422, "INVALID_FEED");
    let (field, _) = refused.field_error();
    assert!(field.starts_with("lines[61].variants["), "{field}");
    assert_eq!(
        import(&t, whole.clone(), true).await.body["catalogVersion"],
        version
    );

    // Export, import, export: the same bytes.
    let applied = import(&t, whole, false).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(
        export_lines(&t).await,
        lines,
        "the round trip changes nothing"
    );
    let version = applied.body["catalogVersion"].clone();

    // A smaller catalog (its header saying so): applied as the next
    // version, search rebuilt.
    let kept: Vec<&String> = lines
        .iter()
        .filter(|l| !l.contains(r#""type":"collection""#))
        .skip(1)
        .take(52 + 100)
        .collect();
    let header = format!(
        r#"{{"type":"header","version":1,"records":{}}}"#,
        kept.len()
    );
    let smaller = std::iter::once(header.as_str())
        .chain(kept.iter().map(|l| l.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    // The same lines under the whole feed's header: an upload cut short,
    // refused whole.
    let cut = std::iter::once(lines[0].as_str())
        .chain(kept.iter().map(|l| l.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    let refused = import(&t, cut, false).await;
    refused.error(422, "INVALID_FEED");
    assert_eq!(
        refused.field_error().0,
        "lines[1].records",
        "{}",
        refused.body
    );
    let applied = import(&t, smaller, false).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(
        (&applied.body["applied"], &applied.body["toDelete"]),
        (&json!(true), &json!(900))
    );
    assert!(applied.body["catalogVersion"].as_u64() > version.as_u64());
    assert_eq!(t.ok("/products").await["total"], 100);
    let mut total = Value::Null;
    for _ in 0..30 {
        total = t.ok("/search?query=a&limit=1").await["total"].clone();
        if total.as_u64().is_some_and(|n| n <= 100) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        total.as_u64().is_some_and(|n| n <= 100),
        "search rebuilt: {total}"
    );
    assert_eq!(export_lines(&t).await.len(), 1 + 52 + 100);
}
both_backends!(
    a_feed_is_imported_whole_or_not_at_all_live,
    a_feed_is_imported_whole_or_not_at_all
);

/// The internal port documents itself to its callers; each route is its
/// callers' only; nothing it answers is kept by a cache; the `Bearer`
/// scheme is read in any case.
#[tokio::test]
async fn internal_routes_are_documented_and_least_privilege() {
    let t = crate::helpers::spawn_mesh().await;
    let url = format!("http://{}/internal/openapi.json", t.mesh.internal_addr);
    let anonymous = t.send(t.http.get(&url)).await;
    anonymous.error(401, "UNAUTHORIZED");
    let stranger = t.mesh.issuer.mint(
        "stranger@example.iam.gserviceaccount.com",
        "gateway-internal",
    );
    let refused = t
        .send(t.http.get(&url).bearer_auth(stranger.unwrap()))
        .await;
    refused.error(403, "FORBIDDEN");
    let document = t
        .send(internal(
            &t,
            MERCHANDISING,
            Method::GET,
            "/internal/openapi.json",
        ))
        .await;
    assert_eq!(document.status, 200);
    assert_eq!(document.header("cache-control"), Some("no-store"));
    let doc = document.body;
    for path in [
        "/internal/catalog/products/{productId}",
        "/internal/catalog/stock",
        "/internal/catalog/import",
        "/internal/catalog/export",
        "/internal/orders/{orderId}/status",
        "/internal/orders",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} undocumented");
    }
    let fulfilment = "fulfilment@storefront.iam.gserviceaccount.com";
    let path = "/internal/catalog/products/p-1";
    let refused = t
        .send(internal(&t, fulfilment, Method::PUT, path).json(&json!({})))
        .await;
    refused.error(403, "FORBIDDEN");
    assert_eq!(refused.header("cache-control"), Some("no-store"));
    assert_eq!(refused.header("x-content-type-options"), Some("nosniff"));

    let token = t
        .mesh
        .issuer
        .mint(MERCHANDISING, "gateway-internal")
        .unwrap();
    let export = format!("http://{}/internal/catalog/export", t.mesh.internal_addr);
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let request = t
            .http
            .get(&export)
            .header("Authorization", format!("{scheme} {token}"));
        let reply = request.send().await.unwrap();
        assert_eq!(reply.status(), 200, "{scheme}");
        assert_eq!(reply.headers()["cache-control"], "no-store");
    }
}

/// A second catalog process on the same Redis, and a restarted one, serve
/// the catalog as changed through the first: the same version, the same
/// product, the change followed within 2 s.
#[tokio::test]
async fn replicas_on_one_redis_serve_the_same_catalog() {
    use storefront_proto::catalog::v1::GetProductRequest;
    use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;

    let mut t = crate::helpers::spawn_mesh_on(crate::helpers::Backend::Redis, &[]).await;
    let replica = async |t: &TestMesh| {
        crate::helpers::replica(t, |env, serving| {
            let config = storefront_catalog::CatalogConfig::from_env(env).unwrap();
            storefront_catalog::serve(config, serving)
        })
        .await
    };
    let token = t
        .mesh
        .issuer
        .mint("gateway@storefront.iam.gserviceaccount.com", "catalog")
        .unwrap();
    let price = async |url: &str, id: &str| -> Option<i64> {
        let mut client = CatalogServiceClient::connect(url.to_string()).await.ok()?;
        let mut request = tonic::Request::new(GetProductRequest {
            product_id: id.into(),
            currency_code: "AUD".into(),
        });
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        client
            .get_product(request)
            .await
            .ok()?
            .into_inner()
            .price
            .map(|m| m.cent_amount)
    };
    let (second, second_stop) = replica(&t).await;
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    assert_eq!(
        put(&t, "p-shared", &lamp(&category, 4200)).await.status,
        200
    );
    let mut seen = None;
    for _ in 0..40 {
        seen = price(&second, "p-shared").await;
        if seen == Some(4200) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, Some(4200), "the second replica follows within 2 s");
    second_stop.cancel();

    // The mesh's own catalog stops; a new one starts on the same Redis.
    t.mesh.stop("catalog").await.unwrap();
    let (restarted, stop) = replica(&t).await;
    let mut seen = None;
    for _ in 0..100 {
        seen = price(&restarted, "p-shared").await;
        if seen.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        seen,
        Some(4200),
        "a restarted catalog serves what was changed"
    );
    stop.cancel();
}

/// A line is priced from the product as the catalog gave it at most
/// `CART_PRODUCT_CACHE_MS` earlier (a long window here, so that the test
/// sees it without waiting); a checkout always reads the catalog afresh.
#[tokio::test]
async fn a_line_may_be_priced_a_moment_late_but_a_checkout_never_is() {
    let t = crate::helpers::spawn_mesh_with(&[("CART_PRODUCT_CACHE_MS", "60000")]).await;
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    assert_eq!(
        put(&t, "p-zanzibar", &lamp(&category, 5000)).await.status,
        200
    );
    let shopper = Shopper::new(&t).await;
    let (first, second) = (shopper.cart().await, shopper.cart().await);
    let priced = |reply: Reply| reply.body["lineItems"][0]["unitPrice"]["centAmount"].clone();
    assert_eq!(priced(shopper.add(&first, "p-zanzibar", 1, 1).await), 5000);

    let mut dearer = lamp(&category, 6500);
    dearer["version"] = json!(1);
    assert_eq!(put(&t, "p-zanzibar", &dearer).await.status, 200);
    let added = shopper.add(&second, "p-zanzibar", 1, 1).await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert_eq!(
        priced(added),
        5000,
        "within the window: the product as it was"
    );
    let session = shopper.checkout(&second).await;
    assert_eq!(session.status, 201, "{}", session.body);
    assert_eq!(
        session.body["totals"]["subtotal"]["centAmount"], 6500,
        "the checkout asks the catalog: {}",
        session.body
    );
}

/// Suggestions are reused for half a second (`documents::Suggestions`):
/// a product deleted just after they were asked for is gone from them
/// within the 2 s promised all the same.
#[tokio::test]
async fn suggestions_follow_a_deletion_within_two_seconds() {
    let t = crate::helpers::spawn_mesh().await;
    let ids = async |t: &TestMesh| -> Vec<String> {
        let found = t.ok("/search/suggestions?query=shi").await;
        let products = found["products"].as_array().unwrap();
        products
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = ids(&t).await[0].clone();
    assert_eq!(ids(&t).await[0], first, "asked again: the same answer");
    let path = format!("/internal/catalog/products/{first}");
    let deleted = t
        .send(internal(&t, MERCHANDISING, Method::DELETE, &path))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    for _ in 0..20 {
        if !ids(&t).await.contains(&first) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{first} still suggested 2 s after it was deleted");
}
