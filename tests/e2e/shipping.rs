//! Shipping at checkout (docs/markets.md, "Shipping"): the market's
//! methods to the address, cheapest first, free from a threshold; a method
//! chosen with `PUT /checkout/{id}`; a markets change seen by an open
//! checkout at confirm (409 `CHECKOUT_REPRICED`, never an order at a stale
//! price); an address the cart's market does not ship to refused.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::catalog_changes::{MERCHANDISING, internal};
use crate::helpers::TestMesh;
use crate::journey::{Shopper, buyable};

fn cents(v: &Value) -> i64 {
    v["centAmount"].as_i64().unwrap()
}

/// Australia alone: standard at 7.00, free from `free_from`; express at
/// 15.00; GST 10% on goods and shipping.
fn australia(free_from: i64) -> Value {
    json!({"markets": [{
        "id": "au",
        "currencies": [{"code": "AUD", "minorUnits": 2}],
        "countries": ["AU"],
        "prices": "taxIncluded",
        "tax": {"name": "GST", "onShipping": true, "rates": [{"country": "AU", "rate": 0.1}]},
        "shipping": [
            {"id": "express", "name": {"en-AU": "Express"},
             "prices": [{"currency": "AUD", "amount": 1500}], "minDays": 1, "maxDays": 2},
            {"id": "standard", "name": {"en-AU": "Standard"},
             "prices": [{"currency": "AUD", "amount": 700}],
             "freeAbove": [{"currency": "AUD", "amount": free_from}], "minDays": 3, "maxDays": 6}
        ]
    }]})
}

async fn set_markets(t: &TestMesh, document: &Value) {
    let request = internal(t, MERCHANDISING, Method::PUT, "/internal/markets");
    let applied = t.send(request.json(document)).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
}

fn offered(session: &Value) -> Vec<(String, i64)> {
    let options = session["shippingOptions"].as_array().unwrap();
    options
        .iter()
        .map(|o| (o["id"].as_str().unwrap().to_string(), cents(&o["price"])))
        .collect()
}

async fn a_checkout_ships_by_a_method_of_its_market(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    let (product, _) = buyable(&t, 1).await.remove(0);
    let added = shopper.add(&cart, &product, 1, 1).await;
    assert_eq!(added.status, 200, "{}", added.body);
    let goods = cents(&added.body["totalPrice"]);

    // Below the threshold: standard is charged, and is the cheapest.
    set_markets(&t, &australia(goods + 1)).await;
    let opened = shopper.checkout(&cart).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    let session = &opened.body;
    let expected = vec![("standard".to_string(), 700), ("express".to_string(), 1500)];
    assert_eq!(offered(session), expected);
    assert_eq!(session["shippingMethodId"], "standard");
    assert_eq!(cents(&session["totals"]["shipping"]), 700);
    assert_eq!(cents(&session["totalPrice"]), goods + 700);
    let id = session["id"].as_str().unwrap().to_string();
    let path = format!("/checkout/{id}");

    // Choosing express reprices at once; an unknown method changes nothing.
    let express = json!({"shippingMethodId": "express"});
    let chosen = shopper.send(Method::PUT, &path, Some(express)).await;
    assert_eq!(chosen.status, 200, "{}", chosen.body);
    assert_eq!(chosen.body["shippingMethodId"], "express");
    assert_eq!(cents(&chosen.body["totalPrice"]), goods + 1500);
    let drone = json!({"shippingMethodId": "drone"});
    let refused = shopper.send(Method::PUT, &path, Some(drone)).await;
    refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.error_fields(), ["shippingMethodId"]);
    let missing = shopper.send(Method::PUT, &path, Some(json!({}))).await;
    assert_eq!(missing.error_fields(), ["shippingMethodId"]);
    let now = shopper.send(Method::GET, &path, None).await;
    assert_eq!(now.body, chosen.body, "nothing changed");

    // Back to standard; then the shop makes it free at this cart's total:
    // the confirm makes no order at the old price, and shows the session
    // repriced, still open.
    let standard = json!({"shippingMethodId": "standard"});
    let back = shopper.send(Method::PUT, &path, Some(standard)).await;
    assert_eq!(cents(&back.body["totalPrice"]), goods + 700);
    set_markets(&t, &australia(goods)).await;
    let stale = shopper.confirm(&id).await;
    let body = stale.error(409, "CHECKOUT_REPRICED");
    let repriced = &body["checkoutSession"];
    assert_eq!(repriced["status"], "OPEN");
    assert_eq!(offered(repriced)[0], ("standard".to_string(), 0));
    assert_eq!(cents(&repriced["totalPrice"]), goods);

    // Confirmed at the new price; the order records its method and tax.
    let confirmed = shopper.confirm(&id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order_id = confirmed.body["orderId"].as_str().unwrap();
    let order = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    let method = &order.body["shippingMethod"];
    assert_eq!(
        (&method["id"], cents(&method["price"])),
        (&json!("standard"), 0)
    );
    assert_eq!(cents(&method["tax"]), 0);
    assert_eq!(order.body["totals"], repriced["totals"]);
}
both_backends!(
    a_checkout_ships_by_a_method_of_its_market_live,
    a_checkout_ships_by_a_method_of_its_market
);

/// A cart's market ships to its countries only: elsewhere is a 422 on the
/// field the client sent, before anything is held.
async fn an_address_outside_the_carts_market_is_refused(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    let (product, _) = buyable(&t, 1).await.remove(0);
    assert_eq!(shopper.add(&cart, &product, 1, 1).await.status, 200);
    let us = json!({"firstName": "Ada", "lastName": "L", "streetName": "Market St",
        "city": "San Francisco", "postalCode": "94103", "state": "CA", "country": "US"});
    let one_off = json!({"cartId": cart, "shippingAddress": us});
    let refused = shopper.send(Method::POST, "/checkout", Some(one_off)).await;
    let body = refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.error_fields(), ["shippingAddress.country"]);
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("ships to AU"), "{message}");
    let made = shopper
        .send(Method::POST, "/customers/me/addresses", Some(us))
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let from_book = json!({"cartId": cart, "shippingAddressId": made.body["id"]});
    let refused = shopper
        .send(Method::POST, "/checkout", Some(from_book))
        .await;
    refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.error_fields(), ["shippingAddressId"]);
}
both_backends!(
    an_address_outside_the_carts_market_is_refused_live,
    an_address_outside_the_carts_market_is_refused
);
