//! A shop started with its own currencies (`MARKETS_FILE`): a zero-decimal
//! (JPY) and a three-decimal one (KWD) through listings, price filters,
//! search, carts, checkout and orders, each amount in its minor units and
//! each `Money` saying how many there are.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};
use crate::markets::market;

/// A markets file of AU (AUD), JP (JPY, 0 decimals) and KW (KWD, 3).
fn markets_file() -> String {
    let document = json!({"markets": [
        market("au", "AUD", 2, "AU"),
        market("jp", "JPY", 0, "JP"),
        market("kw", "KWD", 3, "KW"),
    ]});
    let path = std::env::temp_dir().join(format!("markets-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, document.to_string()).expect("a markets file");
    path.display().to_string()
}

fn cents(v: &Value) -> i64 {
    v["centAmount"].as_i64().unwrap()
}

async fn buys_in(t: &TestMesh, currency: &str, digits: u64, country: &str) {
    // Listed, filtered and searched in the currency.
    let listed = t
        .ok(&format!(
            "/products?currency={currency}&limit=5&sort=price:asc"
        ))
        .await;
    let first = &listed["results"][0]["price"];
    assert_eq!(
        (&first["currencyCode"], &first["fractionDigits"]),
        (&json!(currency), &json!(digits))
    );
    let cheapest = cents(first);
    let filtered = t
        .ok(&format!(
            "/products?currency={currency}&minPrice={}&limit=1",
            cheapest + 1
        ))
        .await;
    assert!(cents(&filtered["results"][0]["price"]) > cheapest);
    let searched = t
        .ok(&format!("/search?query=cotton&currency={currency}&limit=1"))
        .await;
    assert_eq!(searched["results"][0]["price"]["currencyCode"], currency);

    // A cart, a checkout to the market's country, an order: all in it.
    let shopper = Shopper::new(t).await;
    let body = json!({"currencyCode": currency});
    let cart = shopper.send(Method::POST, "/carts", Some(body)).await;
    assert_eq!(cart.status, 201, "{}", cart.body);
    let cart = cart.body["id"].as_str().unwrap().to_string();
    let (product, _) = buyable(t, 2).await.remove(0);
    let added = shopper.add(&cart, &product, 1, 2).await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert_eq!(added.body["totalPrice"]["fractionDigits"], digits);
    let goods = cents(&added.body["totalPrice"]);
    let address = json!({"firstName": "Ada", "lastName": "L", "streetName": "Main St",
        "city": "Capital", "postalCode": "1000", "country": country});
    let opened = shopper
        .send(
            Method::POST,
            "/checkout",
            Some(json!({"cartId": cart, "shippingAddress": address})),
        )
        .await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    // The market's one method, 500 minor units; VAT 10% included.
    assert_eq!(cents(&opened.body["totalPrice"]), goods + 500);
    let id = opened.body["id"].as_str().unwrap();
    let confirmed = shopper.confirm(id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().unwrap();
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    let total = &order.body["totals"]["total"];
    assert_eq!(
        (&total["currencyCode"], &total["fractionDigits"]),
        (&json!(currency), &json!(digits))
    );
    assert_eq!(cents(total), goods + 500);
    assert!(cents(&order.body["totals"]["tax"]) > 0);
}

async fn a_shop_sells_in_its_own_currencies(t: TestMesh) {
    let markets = t.ok("/markets").await;
    assert_eq!(markets["markets"].as_array().unwrap().len(), 3);
    buys_in(&t, "JPY", 0, "JP").await;
    buys_in(&t, "KWD", 3, "KW").await;
    // A currency no market names: refused, naming those there are.
    let refused = t.fetch("/products?currency=USD").await;
    refused.error(400, "INVALID_QUERY_PARAMETER");
    let message = refused.body["message"].as_str().unwrap();
    assert!(message.ends_with("AUD, JPY, KWD"), "{message}");
}

#[tokio::test]
async fn a_shop_sells_in_its_own_currencies_memory() {
    let file = markets_file();
    let t = spawn_mesh_on(Backend::Memory, &[("MARKETS_FILE", &file)]).await;
    a_shop_sells_in_its_own_currencies(t).await;
}

#[tokio::test]
async fn a_shop_sells_in_its_own_currencies_redis() {
    let file = markets_file();
    let t = spawn_mesh_on(Backend::Redis, &[("MARKETS_FILE", &file)]).await;
    a_shop_sells_in_its_own_currencies(t).await;
}
