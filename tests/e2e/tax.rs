//! Tax as the demo markets say (docs/markets.md, "Tax"): a US cart to
//! California, tax excluded at the state's rate and added to the total; a
//! German cart with a toy (the reduced rate of `kids-toys`, by the line's
//! category) and a shirt, VAT included, two tax lines; each line taxed after
//! discounts and rounded half to even, the lines summing to the tax total.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::TestMesh;
use crate::journey::Shopper;

fn cents(v: &Value) -> i64 {
    v["centAmount"].as_i64().unwrap()
}

/// `amount * rate / scale` rounded half to even (`rate` in millionths).
fn half_even(numerator: i64, denominator: i64) -> i64 {
    let (q, r) = (numerator / denominator, numerator % denominator);
    q + i64::from(2 * r > denominator || (2 * r == denominator && q % 2 == 1))
}

/// Active products with stock in the category of key `key` (and those
/// below it), or, with `outside`, in none of them.
async fn stocked(t: &TestMesh, key: &str, outside: bool) -> Vec<String> {
    let mut id = None;
    for offset in (0..2_000).step_by(100) {
        let page = t
            .ok(&format!("/categories?limit=100&offset={offset}"))
            .await;
        let found = page["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == key);
        if let Some(category) = found {
            id = category["id"].as_str().map(str::to_string);
            break;
        }
    }
    let id = id.expect("the category");
    let listed = t.ok("/products?status=active&inStock=true&limit=100").await;
    let inside = t
        .ok(&format!(
            "/products?status=active&inStock=true&limit=100&category={id}"
        ))
        .await;
    let ids = |v: &Value| -> Vec<(String, i64)> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let stock = p["masterVariant"]["availability"]["quantity"]
                    .as_i64()
                    .unwrap_or(0);
                (p["id"].as_str().unwrap().to_string(), stock)
            })
            .collect()
    };
    let inside = ids(&inside);
    let chosen = if outside {
        ids(&listed)
            .into_iter()
            .filter(|p| !inside.contains(p))
            .collect()
    } else {
        inside
    };
    chosen
        .into_iter()
        .filter(|(_, stock)| *stock >= 2)
        .map(|(id, _)| id)
        .collect()
}

async fn cart_in(shopper: &Shopper<'_>, currency: &str, products: &[String]) -> String {
    let made = shopper
        .send(
            Method::POST,
            "/carts",
            Some(json!({"currencyCode": currency})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let cart = made.body["id"].as_str().unwrap().to_string();
    for product in products {
        let added = shopper.add(&cart, product, 1, 1).await;
        assert_eq!(added.status, 200, "{}", added.body);
    }
    cart
}

async fn checkout(shopper: &Shopper<'_>, cart: &str, address: Value) -> Value {
    let body = json!({"cartId": cart, "shippingAddress": address});
    let opened = shopper.send(Method::POST, "/checkout", Some(body)).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    opened.body
}

fn lines(session: &Value) -> Vec<i64> {
    let cart_lines = session["taxLines"].as_array().unwrap();
    cart_lines.iter().map(|l| cents(&l["amount"])).collect()
}

async fn the_demo_markets_tax_as_they_say(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let anything = stocked(&t, "kids-toys", true).await;

    // California: 7.25% added to each line, not to shipping.
    let cart = cart_in(&shopper, "USD", &anything[..2]).await;
    let us = json!({"firstName": "Ada", "lastName": "L", "streetName": "Market St",
        "city": "San Francisco", "postalCode": "94103", "state": "CA", "country": "US"});
    let session = checkout(&shopper, &cart, us).await;
    let read = shopper
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await;
    let goods: Vec<i64> = read.body["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| cents(&l["totalPrice"]))
        .collect();
    let tax: i64 = goods
        .iter()
        .map(|&g| half_even(g * 72_500, 1_000_000))
        .sum();
    let totals = &session["totals"];
    assert_eq!(cents(&totals["tax"]), tax, "{session}");
    assert_eq!(session["taxLines"][0]["name"], "California sales tax");
    assert_eq!(session["taxLines"][0]["rate"], 0.0725);
    assert_eq!(lines(&session).iter().sum::<i64>(), tax);
    let subtotal = cents(&totals["subtotal"]) - cents(&totals["discount"]);
    assert_eq!(
        cents(&totals["total"]),
        subtotal + cents(&totals["shipping"]) + tax,
        "tax excluded: added to the total"
    );

    // Germany: a toy at 7%, the rest and shipping at 19%, all included.
    let toy = stocked(&t, "kids-toys", false).await.remove(0);
    let cart = cart_in(&shopper, "EUR", &[toy, anything[0].clone()]).await;
    let de = json!({"firstName": "Ada", "lastName": "L", "streetName": "Unter den Linden",
        "city": "Berlin", "postalCode": "10117", "country": "DE"});
    let session = checkout(&shopper, &cart, de).await;
    let taxed = session["taxLines"].as_array().unwrap();
    let mut named: Vec<(&str, f64)> = taxed
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), l["rate"].as_f64().unwrap()))
        .collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(
        named,
        [("MwSt.", 0.19), ("MwSt. (ermäßigt)", 0.07)],
        "{session}"
    );
    let read = shopper
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await;
    let items = read.body["lineItems"].as_array().unwrap();
    let toy_line = cents(&items[0]["totalPrice"]);
    let other_line = cents(&items[1]["totalPrice"]);
    let shipping = cents(&session["totals"]["shipping"]);
    let reduced = half_even(toy_line * 70_000, 1_070_000);
    let goods_full = half_even(other_line * 190_000, 1_190_000);
    let full = goods_full + half_even(shipping * 190_000, 1_190_000);
    // The cart shows the estimate before checkout: the same lines' tax,
    // no shipping yet.
    let estimate = &read.body["totals"];
    assert_eq!(
        cents(&estimate["tax"]),
        reduced + goods_full,
        "{}",
        read.body
    );
    assert_eq!(cents(&estimate["shipping"]), 0);
    assert_eq!(read.body["taxLines"].as_array().unwrap().len(), 2);
    let by_name = |name: &str| {
        let line = taxed.iter().find(|l| l["name"] == name).unwrap();
        cents(&line["amount"])
    };
    assert_eq!(
        (by_name("MwSt. (ermäßigt)"), by_name("MwSt.")),
        (reduced, full)
    );
    let totals = &session["totals"];
    assert_eq!(cents(&totals["tax"]), reduced + full);
    assert_eq!(
        cents(&totals["total"]),
        cents(&totals["subtotal"]) - cents(&totals["discount"]) + shipping,
        "tax included: the total does not move"
    );
}
both_backends!(
    the_demo_markets_tax_as_they_say_live,
    the_demo_markets_tax_as_they_say
);
