//! Replicas that agree: two gateways, two cart, two orders and two
//! customers services as separate processes on one Redis, the second
//! gateway and cart spreading their calls over both replicas of each
//! callee (an address list). Money, sessions, budgets and order events
//! stay right whichever replica a request meets.

use reqwest::Method;

use super::{Processes, SharedRedis};
use crate::helpers::Api;
use crate::journey::{Shopper, buyable};

fn both(mesh: &Processes, program: &str) -> String {
    format!(
        "{},{}",
        mesh.addrs.url(program),
        mesh.addrs.url(&format!("{program}-2"))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_of_every_stateful_program_agree() {
    agree(SharedRedis::server()).await;
}

/// The same on a Redis Cluster (three primaries, three replicas).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_of_every_stateful_program_agree_on_a_cluster() {
    agree(SharedRedis::cluster()).await;
}

async fn agree(redis: SharedRedis) {
    // Replicas of the customers service sign with one key (as the chart
    // gives them one Secret); the gateways share one search budget.
    let (pem, _, _) = crate::auth_tokens::signing_key();
    let key = ("TOKEN_SIGNING_KEY".to_string(), pem.clone());
    let configure = |program: &str, env: &mut Vec<(String, String)>, _: &super::Addrs| match program
    {
        "customers" => env.push(key.clone()),
        "gateway" => env.push(("RATE_LIMIT_SEARCH".into(), "6/60s".into())),
        _ => {}
    };
    let mut mesh = Processes::start_on(redis, configure).await;
    mesh.add("orders", "orders-2", &[]).await;
    mesh.add("customers", "customers-2", std::slice::from_ref(&key))
        .await;
    let cart_env = vec![("ORDERS_URL".to_string(), both(&mesh, "orders"))];
    mesh.add("cart", "cart-2", &cart_env).await;
    let gateway_env = vec![
        ("CART_URL".to_string(), both(&mesh, "cart")),
        ("ORDERS_URL".to_string(), both(&mesh, "orders")),
        ("CUSTOMERS_URL".to_string(), both(&mesh, "customers")),
        ("RATE_LIMIT_SEARCH".to_string(), "6/60s".to_string()),
    ];
    mesh.add("gateway", "gateway-2", &gateway_env).await;
    let one = &mesh.api;
    let two = Api {
        base: mesh.addrs.url("gateway-2"),
        http: reqwest::Client::new(),
    };

    // 64 confirms of one checkout, half through each gateway: one order.
    let shopper = Shopper::new(one).await;
    let products = buyable(one, 1).await;
    let id = shopper.checkout_one(&products[0].0).await;
    let paid = shopper.pay(&id, "pm_card_visa").await;
    assert_eq!(paid.status, 201, "{}", paid.body);
    let path = format!("/checkout/{id}/confirm");
    let confirms = (0..64).map(|n| {
        let (api, token, path) = (if n % 2 == 0 { one } else { &two }, &shopper.token, &path);
        async move { api.send(api.authed(Method::POST, path, token)).await }
    });
    let replies = futures::future::join_all(confirms).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(
            reply.body["orderId"], replies[0].body["orderId"],
            "one order"
        );
    }
    let orders = two
        .send(two.authed(Method::GET, "/orders", &shopper.token))
        .await;
    assert_eq!(orders.body["total"], 1, "{}", orders.body);

    // A logout through one gateway is refused at the other at once.
    let out = one
        .send(one.authed(Method::POST, "/auth/logout", &shopper.token))
        .await;
    assert_eq!(out.status, 204);
    two.send(two.authed(Method::GET, "/customers/me", &shopper.token))
        .await
        .error(401, "TOKEN_REVOKED");

    // One budget (6 searches a minute per client), spent on both.
    for n in 0..6 {
        let api = if n % 2 == 0 { one } else { &two };
        let reply = api.send(api.get("/search?query=shirt")).await;
        assert_eq!(reply.status, 200, "search {n}: {}", reply.body);
    }
    for api in [one, &two] {
        api.send(api.get("/search?query=shirt"))
            .await
            .error(429, "RATE_LIMIT_EXCEEDED");
    }

    // The order's event, published by whichever orders replica made it,
    // reaches a consumer group once.
    let store = storefront_platform::store::Store::redis(mesh.redis_url(), "sf:")
        .await
        .unwrap();
    let stream = storefront_orders::outbox::STREAM;
    let events = store
        .stream_read_group(stream, "fulfilment", "f", 100)
        .await
        .unwrap();
    let created: Vec<_> = events
        .iter()
        .filter(|e| e.field("type") == Some(&b"order.created"[..]))
        .collect();
    assert_eq!(created.len(), 1, "one order, one created event: {events:?}");
    let again = store
        .stream_read_group(stream, "fulfilment", "g", 100)
        .await
        .unwrap();
    assert!(again.is_empty(), "once per group");
}

/// Stock held across replicas: two catalog replicas on one Redis, the
/// second cart spreading its holds over both; 20 shoppers racing for 5
/// units through the second gateway: exactly 5 hold, and every replica
/// shows none left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn holds_across_catalog_replicas_never_take_more_than_there_is() {
    let mut mesh = Processes::start_on(SharedRedis::server(), |_, _, _| {}).await;
    mesh.add("catalog", "catalog-2", &[]).await;
    let cart_env = vec![("CATALOG_URL".to_string(), both(&mesh, "catalog"))];
    mesh.add("cart", "cart-2", &cart_env).await;
    let gateway_env = vec![("CART_URL".to_string(), mesh.addrs.url("cart-2"))];
    mesh.add("gateway", "gateway-2", &gateway_env).await;
    let two = Api {
        base: mesh.addrs.url("gateway-2"),
        http: reqwest::Client::new(),
    };

    // The shop puts a product with 5 units (the internal port, as the
    // merchandising account, its token from the dev issuer).
    let issuer = mesh
        .addrs
        .url(storefront_platform::topology::DEV_ISSUER.name);
    let account = "merchandising@storefront.iam.gserviceaccount.com";
    let token_url = storefront_platform::identity::dev_issuer::account_url(&issuer, account);
    let token = two
        .http
        .get(format!("{token_url}?audience=gateway-internal&format=full"))
        .header("Metadata-Flavor", "Google")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let category = mesh.api.ok("/categories?limit=1").await["results"][0]["id"].clone();
    let record = serde_json::json!({
        "key": "replica-lamp", "name": {"en-AU": "Replica Lamp"}, "brand": "Lumen", "categoryId": category,
        "variants": [{"id": 1, "sku": "REPLICA-1",
            "prices": [{"currencyCode": "AUD", "centAmount": 1500}], "availability": {"quantity": 5}}]
    });
    let internal = mesh.addrs.url("gateway-internal");
    let put = two
        .http
        .put(format!("{internal}/internal/catalog/products/p-replica"))
        .bearer_auth(token.trim())
        .json(&record)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200, "{}", put.text().await.unwrap());

    let mut shoppers = Vec::new();
    for _ in 0..20 {
        let shopper = Shopper::new(&two).await;
        let cart = shopper.cart().await;
        // A line add may meet the catalog replica that has not followed
        // the put yet (within a second): retried until it is there.
        for attempt in 0.. {
            let added = shopper.add(&cart, "p-replica", 1, 1).await;
            if added.status == 200 {
                break;
            }
            assert!(attempt < 20, "{}", added.body);
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        shoppers.push((shopper, cart));
    }
    let opened = futures::future::join_all(shoppers.iter().map(|(s, cart)| s.checkout(cart))).await;
    let held = opened.iter().filter(|r| r.status == 201).count();
    for refused in opened.iter().filter(|r| r.status != 201) {
        assert_eq!(refused.status, 409, "{}", refused.body);
    }
    assert_eq!(
        held, 5,
        "five units, five holds across two catalog replicas"
    );
    for api in [&mesh.api, &two] {
        let mut left = u64::MAX;
        for _ in 0..30 {
            let product = api.ok("/products/p-replica").await;
            left = product["variants"][0]["availability"]["quantity"]
                .as_u64()
                .unwrap();
            if left == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(left, 0, "none left on {}", api.base);
    }
}
