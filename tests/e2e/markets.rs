//! The shop's markets: the demo set, set whole on the internal port
//! (checked whole, every problem named by its path), and seen by every
//! cart replica.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::catalog_changes::{MERCHANDISING, internal};
use crate::helpers::{Reply, TestMesh};
use crate::journey::{Shopper, buyable};

pub async fn set(t: &TestMesh, account: &str, document: &Value) -> Reply {
    let request = internal(t, account, Method::PUT, "/internal/markets");
    t.send(request.json(document)).await
}

async fn ids(t: &TestMesh) -> Vec<String> {
    let markets = t.ok("/markets").await;
    markets["markets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

/// A market in a currency of `minor_units` digits, with one shipping method.
pub fn market(id: &str, currency: &str, minor_units: u32, country: &str) -> Value {
    json!({
        "id": id,
        "currencies": [{"code": currency, "minorUnits": minor_units}],
        "countries": [country],
        "prices": "taxIncluded",
        "tax": {"name": "VAT", "rates": [{"country": country, "rate": 0.1}]},
        "shipping": [{"id": "standard", "name": {"en-AU": "Standard"},
            "prices": [{"currency": currency, "amount": 500}], "minDays": 1, "maxDays": 3}]
    })
}

async fn the_shop_sets_its_markets(t: TestMesh) {
    let demo = t.ok("/markets").await;
    assert_eq!(ids(&t).await, ["au", "nz", "us", "de"], "the demo first");
    let us = &demo["markets"][2];
    assert_eq!(us["prices"], "taxExcluded");
    assert_eq!(us["tax"]["rates"][1]["region"], "US-CA");
    assert_eq!(
        demo["markets"][3]["currencies"][0],
        json!({"code": "EUR", "minorUnits": 2})
    );

    // A currency added live: the catalog, search and preferences take it up
    // within seconds, and a cart is bought in it.
    let set_yen = json!({"markets": [market("au", "AUD", 2, "AU"), market("jp", "JPY", 0, "JP")]});
    let applied = set(&t, MERCHANDISING, &set_yen).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    buys_in_yen(&t).await;
    // Past eight currencies between restarts (one price index each): the
    // rest are refused by their paths.
    let codes = ["GBP", "CAD", "CHF", "SEK"];
    let many: Vec<Value> = codes
        .iter()
        .map(|c| json!({"code": c, "minorUnits": 2}))
        .collect();
    let mut eu = market("eu", "GBP", 2, "GB");
    eu["currencies"] = json!(many);
    eu["shipping"] = json!([]);
    let refused = set(&t, MERCHANDISING, &json!({"markets": [eu]})).await;
    refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.error_fields(), ["markets[0].currencies[3].code"]);
    let set_two = json!({"markets": [market("au", "AUD", 2, "AU"), market("de", "EUR", 2, "DE")]});
    let applied = set(&t, MERCHANDISING, &set_two).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(ids(&t).await, ["au", "de"]);
    // A cart in a currency no market sells now is refused, naming those sold.
    let shopper = Shopper::new(&t).await;
    let usd = json!({"currencyCode": "USD"});
    let refused = shopper.send(Method::POST, "/carts", Some(usd)).await;
    refused.error(422, "VALIDATION_ERROR");
    let message = refused.body["message"].as_str().unwrap();
    assert!(message.ends_with("AUD, EUR"), "{message}");

    // A refused set names each problem by its path and changes nothing.
    let mut bad = market("jp", "JPY", 0, "JP");
    bad["tax"]["rates"][0]["rate"] = json!(1.5);
    let mut twin = market("jp", "JPY", 0, "JP");
    twin["currencies"][0] = json!({"code": "JPY"});
    let refused = set(&t, MERCHANDISING, &json!({"markets": [bad, twin]})).await;
    refused.error(422, "VALIDATION_ERROR");
    let fields = refused.error_fields();
    for field in [
        "markets[0].tax.rates[0].rate",
        "markets[1].id",
        "markets[1].currencies[0].minorUnits",
        "markets[1].countries[0]",
    ] {
        assert!(fields.contains(&field), "{field} in {fields:?}");
    }
    let message = refused.body["message"].as_str().unwrap();
    assert!(
        message.contains("markets[0].tax.rates[0].rate: must be between 0 and 1"),
        "{message}"
    );
    let typo = set(
        &t,
        MERCHANDISING,
        &json!({"markets": [{"id": "x", "currency": []}]}),
    )
    .await;
    assert_eq!(typo.field_error().0, "markets[0].currency");
    assert_eq!(ids(&t).await, ["au", "de"], "nothing changed");

    // Least privilege: fulfilment may not set markets.
    let fulfilment = "fulfilment@storefront.iam.gserviceaccount.com";
    set(&t, fulfilment, &set_two).await.error(403, "FORBIDDEN");
}
both_backends!(the_shop_sets_its_markets_live, the_shop_sets_its_markets);

/// Waits (up to five seconds) for `path` to answer 200.
async fn answered(t: &TestMesh, path: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..100 {
        let reply = t.fetch(path).await;
        if reply.status == 200 {
            return reply.body;
        }
        last = reply.body;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{path} did not answer 200 within five seconds: {last}");
}

/// JPY, added live: indexed within seconds (nothing priced in it yet, so
/// nothing listed), then a product priced in it is listed, searched,
/// preferred and bought.
async fn buys_in_yen(t: &TestMesh) {
    let listed = answered(t, "/products?currency=JPY&limit=5").await;
    assert_eq!(listed["total"], 0, "no product is listed without a price");
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    let prices = json!([{"currencyCode": "AUD", "centAmount": 4500}, {"currencyCode": "JPY", "centAmount": 4200}]);
    let record = json!({"key": "kyoto-bowl", "name": {"en-AU": "Kyoto Bowl"}, "brand": "Lumen",
        "categoryId": category,
        "variants": [{"id": 1, "sku": "KB-1", "prices": prices, "availability": {"quantity": 5}}]});
    let request = internal(
        t,
        MERCHANDISING,
        Method::PUT,
        "/internal/catalog/products/p-kyoto",
    );
    let put = t.send(request.json(&record)).await;
    assert_eq!(put.status, 200, "{}", put.body);
    let listed = t.ok("/products?currency=JPY&limit=5").await;
    let price = &listed["results"][0]["price"];
    assert_eq!(
        (&price["centAmount"], &price["fractionDigits"]),
        (&json!(4200), &json!(0))
    );
    let mut found = Value::Null;
    for _ in 0..100 {
        found = answered(t, "/search?query=kyoto&currency=JPY").await;
        if found["total"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        found["results"][0]["price"]["currencyCode"], "JPY",
        "{found}"
    );
    let shopper = Shopper::new(t).await;
    let preferred =
        json!({"preferredLocale": "en-AU", "preferredCurrency": "JPY", "marketingEmails": false});
    let mut kept = Value::Null;
    for _ in 0..100 {
        let reply = shopper
            .send(
                Method::PUT,
                "/customers/me/preferences",
                Some(preferred.clone()),
            )
            .await;
        kept = reply.body;
        if reply.status == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(kept["preferredCurrency"], "JPY", "{kept}");
    let made = shopper
        .send(Method::POST, "/carts", Some(json!({"currencyCode": "JPY"})))
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let cart = made.body["id"].as_str().unwrap().to_string();
    let added = shopper.add(&cart, "p-kyoto", 1, 1).await;
    assert_eq!(added.status, 200, "{}", added.body);
    let address = json!({"firstName": "Ada", "lastName": "L", "streetName": "Chuo-dori",
        "city": "Tokyo", "postalCode": "1000001", "country": "JP"});
    let body = json!({"cartId": cart, "shippingAddress": address});
    let opened = shopper.send(Method::POST, "/checkout", Some(body)).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    let confirmed = shopper.confirm(opened.body["id"].as_str().unwrap()).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().unwrap();
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    let total = &order.body["totals"]["total"];
    assert_eq!(
        (&total["currencyCode"], &total["fractionDigits"]),
        (&json!("JPY"), &json!(0))
    );
    assert_eq!(
        total["centAmount"],
        4200 + 500,
        "the bowl and the market's shipping"
    );
}

/// An order's tax is its market's: set live, an AUD order is taxed at the
/// AU market's rate, each line's share rounded half to even and summed.
async fn an_order_is_taxed_as_its_market_says(t: TestMesh) {
    let mut au = market("au", "AUD", 2, "AU");
    au["tax"]["rates"][0]["rate"] = json!(0.2);
    let applied = set(&t, MERCHANDISING, &json!({"markets": [au]})).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    for (product, _) in buyable(&t, 2).await.into_iter().take(3) {
        let added = shopper.add(&cart, &product, 1, 2).await;
        assert_eq!(added.status, 200, "{}", added.body);
    }
    let session = shopper.checkout(&cart).await;
    assert_eq!(session.status, 201, "{}", session.body);
    // The session shows what the order will come to, its tax by line.
    let totals = &session.body["totals"];
    assert_eq!(totals["total"], session.body["totalPrice"]);
    let lines = session.body["taxLines"].as_array().unwrap();
    assert_eq!(
        (lines.len(), &lines[0]["name"], &lines[0]["rate"]),
        (1, &json!("VAT"), &json!(0.2))
    );
    assert_eq!(lines[0]["amount"], totals["tax"]);
    let confirmed = shopper.confirm(session.body["id"].as_str().unwrap()).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().unwrap();
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    let cents = |v: &Value| v["centAmount"].as_i64().unwrap();
    // 20% included: a line's tax is a sixth of it.
    let sixths: i64 = order.body["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            let amount = cents(&line["totalPrice"]);
            let (q, r) = (amount / 6, amount % 6);
            q + i64::from(2 * r > 6 || (2 * r == 6 && q % 2 == 1))
        })
        .sum();
    assert_eq!(
        cents(&order.body["totals"]["tax"]),
        sixths,
        "{}",
        order.body
    );
    assert!(sixths > 0);
    assert_eq!(
        order.body["totals"], *totals,
        "the order is what the session said"
    );
    assert_eq!(order.body["taxLines"], session.body["taxLines"]);
}
both_backends!(
    an_order_is_taxed_as_its_market_says_live,
    an_order_is_taxed_as_its_market_says
);

/// An address may name its region (ISO 3166-2 of its own country), and the
/// checkout carries it to the order; any other region is refused.
async fn an_address_names_its_region(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let address = |region: &str| {
        json!({"firstName": "Ada", "lastName": "L", "streetName": "George St", "city": "Sydney",
            "postalCode": "2000", "country": "AU", "region": region})
    };
    for bad in ["US-CA", "NSW", "AU-TOOLONG"] {
        let refused = shopper
            .send(Method::POST, "/customers/me/addresses", Some(address(bad)))
            .await;
        refused.error(422, "VALIDATION_ERROR");
        assert_eq!(refused.error_fields(), ["region"], "{bad}");
    }
    let made = shopper
        .send(
            Method::POST,
            "/customers/me/addresses",
            Some(address("au-nsw")),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.body["region"], "AU-NSW");
    let cart = shopper.cart().await;
    let (product, _) = buyable(&t, 1).await.remove(0);
    assert_eq!(shopper.add(&cart, &product, 1, 1).await.status, 200);
    let body = json!({"cartId": cart, "shippingAddressId": made.body["id"]});
    let session = shopper.send(Method::POST, "/checkout", Some(body)).await;
    assert_eq!(session.status, 201, "{}", session.body);
    assert_eq!(session.body["shippingAddress"]["region"], "AU-NSW");
}
both_backends!(
    an_address_names_its_region_live,
    an_address_names_its_region
);

/// A set put through one cart replica is the one a second replica on the
/// same Redis serves within two seconds (each follows the shared store).
#[tokio::test]
async fn a_second_replica_takes_up_a_set_put_through_the_first() {
    use storefront_proto::cart::v1::GetMarketsRequest;
    use storefront_proto::cart::v1::cart_service_client::CartServiceClient;

    let t = crate::helpers::spawn_mesh_on(crate::helpers::Backend::Redis, &[]).await;
    let (url, stop) = crate::helpers::replica(&t, |env, serving| {
        let config = storefront_cart::CartConfig::from_env(env).unwrap();
        storefront_cart::serve(config, serving)
    })
    .await;
    let token = t
        .mesh
        .issuer
        .mint("gateway@storefront.iam.gserviceaccount.com", "cart")
        .unwrap();
    let markets = async || -> Option<u32> {
        let mut client = CartServiceClient::connect(url.clone()).await.ok()?;
        let mut request = tonic::Request::new(GetMarketsRequest {});
        let bearer = format!("Bearer {token}").parse().ok()?;
        request.metadata_mut().insert("authorization", bearer);
        Some(client.get_markets(request).await.ok()?.into_inner().markets)
    };
    let two = json!({"markets": [market("au", "AUD", 2, "AU"), market("de", "EUR", 2, "DE")]});
    let applied = set(&t, MERCHANDISING, &two).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    let mut seen = None;
    for _ in 0..40 {
        seen = markets().await;
        if seen == Some(2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(seen, Some(2), "the second replica follows within 2 s");
    stop.cancel();
}
