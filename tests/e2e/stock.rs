//! Stock that checkouts hold and orders sell, through the gateway on both
//! stores: shoppers racing for the last units, a sale, a cancelled order's
//! return, an expired hold released, a superseded one replaced, one
//! extension per session.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::catalog_changes::{MERCHANDISING, internal};
use crate::helpers::{Backend, Reply, TestMesh, spawn_mesh_on};
use crate::journey::Shopper;

/// Creates product `id` whose one variant (`{id}-1`) has `quantity` units.
pub async fn product_with(t: &TestMesh, id: &str, quantity: u64) {
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    let record = json!({
        "key": id, "name": {"en-AU": "Last Lantern"}, "brand": "Lumen", "categoryId": category,
        "variants": [{"id": 1, "sku": format!("{id}-1"),
            "prices": [{"currencyCode": "AUD", "centAmount": 1500}],
            "availability": {"quantity": quantity}}]
    });
    let path = format!("/internal/catalog/products/{id}");
    let put = t
        .send(internal(t, MERCHANDISING, Method::PUT, &path).json(&record))
        .await;
    assert_eq!(put.status, 200, "{}", put.body);
}

/// What everyone is shown as available of the product's variant.
async fn available(t: &TestMesh, id: &str) -> u64 {
    let product = t.ok(&format!("/products/{id}")).await;
    product["variants"][0]["availability"]["quantity"]
        .as_u64()
        .unwrap()
}

/// Waits (10 s at most) until `available` is `quantity`.
async fn available_becomes(t: &TestMesh, id: &str, quantity: u64) {
    for _ in 0..100 {
        if available(t, id).await == quantity {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{id}: {} available, never {quantity}",
        available(t, id).await
    );
}

fn session_id(reply: &Reply) -> String {
    assert_eq!(reply.status, 201, "{}", reply.body);
    reply.body["id"].as_str().unwrap().to_string()
}

/// A refused checkout names the line and what is left of it.
fn names_the_line(reply: &Reply) {
    assert_eq!(reply.status, 409, "{}", reply.body);
    let code = reply.body["code"].as_str().unwrap();
    assert!(
        ["INSUFFICIENT_STOCK", "LINE_UNAVAILABLE"].contains(&code),
        "{}",
        reply.body
    );
    let fields = reply.body["errors"].to_string();
    assert!(fields.contains("lineItems"), "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap();
    assert!(message.contains("0 left"), "{message}");
}

async fn racing_shoppers_hold_exactly_what_there_is(t: TestMesh) {
    product_with(&t, "p-lantern", 5).await;
    let mut shoppers = Vec::new();
    for _ in 0..20 {
        let shopper = Shopper::new(&t).await;
        let cart = shopper.cart().await;
        let added = shopper.add(&cart, "p-lantern", 1, 1).await;
        assert_eq!(added.status, 200, "{}", added.body);
        shoppers.push((shopper, cart));
    }
    let opened = futures::future::join_all(shoppers.iter().map(|(s, cart)| s.checkout(cart))).await;
    let held: Vec<usize> = (0..20).filter(|&i| opened[i].status == 201).collect();
    assert_eq!(held.len(), 5, "five units, five holds");
    for refused in opened.iter().filter(|r| r.status != 201) {
        names_the_line(refused);
    }
    assert_eq!(available(&t, "p-lantern").await, 0, "held units are gone");
    let listed = t.ok("/products?inStock=true&limit=100&sort=name:asc").await;
    assert!(
        !listed["results"].to_string().contains("p-lantern"),
        "nor listed in stock"
    );
    // A shopper refused cannot add more than is left either (once the
    // product a line add reuses, `CART_PRODUCT_CACHE_MS`, is fresh).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let late = &shoppers[(0..20).find(|i| !held.contains(i)).unwrap()];
    let extra = late.0.add(&late.1, "p-lantern", 1, 1).await;
    assert_eq!(extra.status, 422, "{}", extra.body);

    // Each confirmed three times at once (double clicks): sold once.
    let shoppers = &shoppers;
    let confirms = held.iter().flat_map(|&i| [i; 3]).map(|i| {
        let session = session_id(&opened[i]);
        async move { shoppers[i].0.confirm(&session).await }
    });
    let confirmed = futures::future::join_all(confirms).await;
    for reply in &confirmed {
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    assert_eq!(available(&t, "p-lantern").await, 0, "sold");
    let export = internal(&t, MERCHANDISING, Method::GET, "/internal/catalog/export")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let line = export.lines().find(|l| l.contains("p-lantern-1")).unwrap();
    let record: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        record["variants"][0]["availability"],
        json!({"quantity": 0}),
        "none on hand, none held"
    );

    // A cancelled order returns its unit; a shopper refused before buys it.
    let order = confirmed[0].body["orderId"].as_str().unwrap().to_string();
    let buyer = &shoppers[held[0]].0;
    let cancel = json!({"status": "CANCELLED"});
    let cancelled = buyer
        .send(Method::PUT, &format!("/orders/{order}"), Some(cancel))
        .await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);
    available_becomes(&t, "p-lantern", 1).await;
    let again = late.0.checkout(&late.1).await;
    session_id(&again);
    assert_eq!(available(&t, "p-lantern").await, 0);
}
crate::both_backends!(
    racing_shoppers_hold_exactly_what_there_is_live,
    racing_shoppers_hold_exactly_what_there_is
);

async fn holds_end_with_their_session(backend: Backend) {
    let t = spawn_mesh_on(backend, &[("CHECKOUT_TTL_SECS", "3")]).await;
    product_with(&t, "p-lamp", 1).await;
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    assert_eq!(shopper.add(&cart, "p-lamp", 1, 1).await.status, 200);

    // A newer session of the cart replaces the one before and its hold.
    let first = session_id(&shopper.checkout(&cart).await);
    let second = session_id(&shopper.checkout(&cart).await);
    assert_eq!(available(&t, "p-lamp").await, 0, "one hold, not two");
    shopper
        .confirm(&first)
        .await
        .error(409, "CHECKOUT_SUPERSEDED");

    // Extended once, 2 s in: the hold outlives the session's first expiry
    // (3 s) and the sweep after it (within 1 s), to 5 s.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let extend = format!("/checkout/{second}/extend");
    let extended = shopper.send(Method::POST, &extend, None).await;
    assert_eq!(extended.status, 200, "{}", extended.body);
    assert_eq!(extended.body["status"], "OPEN");
    shopper
        .send(Method::POST, &extend, None)
        .await
        .error(409, "CHECKOUT_ALREADY_EXTENDED");
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(
        available(&t, "p-lamp").await,
        0,
        "still held past the first expiry"
    );

    // Expired: released for everyone; the session can no longer buy.
    available_becomes(&t, "p-lamp", 1).await;
    shopper
        .confirm(&second)
        .await
        .error(409, "CHECKOUT_EXPIRED");
    shopper
        .send(Method::POST, &extend, None)
        .await
        .error(409, "CHECKOUT_EXPIRED");
}

#[tokio::test]
async fn holds_end_with_their_session_memory() {
    holds_end_with_their_session(Backend::Memory).await;
}

#[tokio::test]
async fn holds_end_with_their_session_redis() {
    holds_end_with_their_session(Backend::Redis).await;
}

/// Waits (5 s at most) until `check` holds.
async fn eventually(what: &str, check: impl AsyncFn() -> bool) {
    for _ in 0..50 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never {what}");
}

/// Issue 44 item 9: every view of availability shows stock less holds
/// and sales: detail, listing items (`masterVariant`, `inStock`), the
/// `inStock` filter, and search's hits and facets (within its bound).
async fn every_view_shows_what_is_left(t: TestMesh) {
    product_with(&t, "p-zanzibar", 1).await;
    // Its hit among the "lantern" searches (brand Lumen), and the facet.
    let hit = async |filter: &str| {
        let found = t
            .ok(&format!(
                "/search?query=lantern&brand=Lumen&limit=100{filter}"
            ))
            .await;
        let hit = found["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "p-zanzibar")
            .cloned();
        (hit, found["facets"]["inStock"].to_string())
    };
    eventually("found by search", async || hit("").await.0.is_some()).await;
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    assert_eq!(shopper.add(&cart, "p-zanzibar", 1, 1).await.status, 200);
    let session = session_id(&shopper.checkout(&cart).await);
    assert_eq!(shopper.confirm(&session).await.status, 200);

    assert_eq!(available(&t, "p-zanzibar").await, 0);
    let listed = t.walk("sort=createdAt:desc", 100).await;
    let item = listed
        .iter()
        .find(|p| p["id"] == "p-zanzibar")
        .expect("listed")
        .clone();
    assert_eq!(item["inStock"], false, "{item}");
    assert_eq!(
        item["masterVariant"]["availability"]["quantity"], 0,
        "{item}"
    );
    let in_stock = t.walk("inStock=true", 100).await;
    assert!(
        !in_stock.iter().any(|p| p["id"] == "p-zanzibar"),
        "filtered out"
    );
    eventually("out of stock in search", async || {
        let (found, facet) = hit("").await;
        let out = found.is_some_and(|h| h["inStock"] == false);
        out && !facet.contains(r#""value":true"#)
    })
    .await;
    assert!(hit("&inStock=true").await.0.is_none());
}
crate::both_backends!(
    every_view_shows_what_is_left_live,
    every_view_shows_what_is_left
);

/// `AdjustStockBatch` over gRPC as the cart sends it: each operation
/// answered as it would be alone (applied, short, refused as invalid with
/// its field, a repeat); the orders service may not call it.
async fn a_batch_of_stock_operations_answers_each_as_alone(t: TestMesh) {
    use storefront_platform::topology::{CART, ORDERS};
    use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
    use storefront_proto::catalog::v1::{
        AdjustStockBatchRequest, AdjustStockRequest, StockAction, StockLine,
    };
    product_with(&t, "p-batch", 5).await;
    let op = |id: &str, action: StockAction, quantity: u32, hold: &str| AdjustStockRequest {
        operation_id: id.into(),
        action: action as i32,
        lines: (quantity > 0)
            .then(|| StockLine {
                sku: "p-batch-1".into(),
                quantity,
            })
            .into_iter()
            .collect(),
        hold_id: hold.into(),
    };
    let operations = vec![
        op("e2e-h1", StockAction::Hold, 3, ""),
        op("e2e-h2", StockAction::Hold, 3, ""),
        op("e2e-bad", StockAction::Hold, 0, ""),
        op("e2e-h1", StockAction::Hold, 3, ""),
        op("e2e-s1", StockAction::Sell, 3, "e2e-h1"),
    ];
    let batch = AdjustStockBatchRequest { operations };
    let address = format!("http://{}", t.mesh.catalog_addr);
    let mut client = CatalogServiceClient::connect(address).await.unwrap();
    let as_orders = t.grpc_as(ORDERS.dev_account, "catalog", batch.clone());
    let denied = client.adjust_stock_batch(as_orders).await.unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    let as_cart = t.grpc_as(CART.dev_account, "catalog", batch);
    let reply = client
        .adjust_stock_batch(as_cart)
        .await
        .unwrap()
        .into_inner();
    let [held, short, bad, again, sold] = reply.outcomes.try_into().unwrap();
    assert!(held.reply.unwrap().applied);
    let short = short.reply.unwrap();
    assert!(!short.applied);
    assert_eq!(
        (short.shortages[0].requested, short.shortages[0].available),
        (3, 2)
    );
    assert!(bad.reply.is_none());
    let status = tonic::Status::from(bad.error.expect("refused"));
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    let details = storefront_proto::error::status_details(&status);
    assert_eq!(details.reason.as_deref(), Some("VALIDATION_ERROR"));
    assert_eq!(details.violations[0].field, "lines", "{}", status.message());
    let again = again.reply.unwrap();
    assert!(!again.applied && again.shortages.is_empty(), "a repeat");
    assert!(sold.reply.unwrap().applied);
    available_becomes(&t, "p-batch", 2).await;
}
crate::both_backends!(
    stock_batch_calls,
    a_batch_of_stock_operations_answers_each_as_alone
);
