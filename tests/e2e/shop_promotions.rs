//! The shop sets its own promotions on the internal port: the whole set
//! replaced, checked field by field (a refused set changes nothing), and
//! priced with at once; the demo set is gone for good.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::catalog_changes::{MERCHANDISING, internal};
use crate::helpers::{Reply, TestMesh};
use crate::journey::{Shopper, buyable};

async fn set(t: &TestMesh, account: &str, document: &Value) -> Reply {
    let request = internal(t, account, Method::PUT, "/internal/promotions");
    t.send(request.json(document)).await
}

async fn keys(t: &TestMesh) -> Vec<String> {
    let page = t.ok("/promotions").await;
    let results = page["results"].as_array().unwrap();
    results
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect()
}

fn bloom() -> Value {
    json!({
        "id": "promo-bloom", "key": "bloom", "name": {"en-AU": "15% off in bloom"},
        "codes": ["BLOOM15"], "type": "percentage", "basisPoints": 1500,
        "startsAt": "2020-01-01T00:00:00Z", "endsAt": "2999-01-01T00:00:00Z"
    })
}

async fn the_shop_sets_its_promotions(t: TestMesh) {
    assert!(
        keys(&t).await.contains(&"welcome".to_string()),
        "the demo set first"
    );
    let applied = set(&t, MERCHANDISING, &json!({ "promotions": [bloom()] })).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    assert_eq!(applied.body["promotions"], 1);
    assert_eq!(keys(&t).await, ["bloom"]);

    let shopper = Shopper::new(&t).await;
    let (product, _) = buyable(&t, 1).await.remove(0);
    let cart = shopper.cart().await;
    assert_eq!(shopper.add(&cart, &product, 1, 1).await.status, 200);
    let path = format!("/carts/{cart}");
    let code = async |code: &str| {
        let body = json!({ "discountCode": code });
        shopper.send(Method::PUT, &path, Some(body)).await
    };
    code("WELCOME10").await.error(422, "VALIDATION_ERROR");
    let priced = code("bloom15").await;
    assert_eq!(priced.status, 200, "{}", priced.body);
    assert_eq!(priced.body["discountCodes"], json!(["BLOOM15"]));
    let subtotal = priced.body["subtotal"]["centAmount"].as_i64().unwrap();
    assert_eq!(
        priced.body["discountTotal"]["centAmount"].as_i64().unwrap(),
        subtotal * 1500 / 10_000
    );

    // A refused set names every bad field and changes nothing.
    let mut twin = bloom();
    twin["id"] = json!("promo-twin");
    twin["type"] = json!("fixedAmount");
    twin["amounts"] = json!([{"currencyCode": "euro", "centAmount": 0}]);
    let refused = set(&t, MERCHANDISING, &json!({ "promotions": [bloom(), twin] })).await;
    refused.error(422, "VALIDATION_ERROR");
    let fields = refused.error_fields();
    for field in [
        "promotions[1].codes[0]",
        "promotions[1].amounts[0].currencyCode",
        "promotions[1].amounts[0].centAmount",
    ] {
        assert!(fields.contains(&field), "{field} in {fields:?}");
    }
    let unknown = set(&t, MERCHANDISING, &json!({ "promotions": [{"id": 1}] })).await;
    assert_eq!(unknown.field_error().0, "promotions[0].id");
    assert_eq!(keys(&t).await, ["bloom"], "nothing changed");

    let fulfilment = "fulfilment@storefront.iam.gserviceaccount.com";
    set(&t, fulfilment, &json!({ "promotions": [] }))
        .await
        .error(403, "FORBIDDEN");

    // A checkout opened with the code; then the code goes: no order at the
    // old total, and the cart is without it.
    let opened = shopper.checkout(&cart).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    assert_eq!(opened.body["totals"]["subtotal"], priced.body["subtotal"]);
    assert_eq!(
        opened.body["totals"]["discount"],
        priced.body["discountTotal"]
    );
    let emptied = set(&t, MERCHANDISING, &json!({ "promotions": [] })).await;
    assert_eq!(emptied.status, 200);
    assert!(keys(&t).await.is_empty());
    let session = opened.body["id"].as_str().unwrap();
    shopper.confirm(session).await.error(409, "CART_REPRICED");
    let read = shopper.send(Method::GET, &path, None).await;
    assert_eq!(
        read.body["discountCodes"],
        json!([]),
        "a code gone is dropped"
    );
    assert_eq!(read.body["discountTotal"]["centAmount"], 0);
}
both_backends!(
    the_shop_sets_its_promotions_live,
    the_shop_sets_its_promotions
);
