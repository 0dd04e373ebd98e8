//! Cart, promotion, checkout and order rules with their exact errors.

use reqwest::Method;
use serde_json::json;

use crate::both_backends;
use crate::helpers::{Backend, TestMesh, spawn_mesh, spawn_mesh_on};
use crate::journey::{Shopper, assert_adds_up, buyable};

async fn validate_input(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let cart = shopper.cart().await;
    let line = format!("/carts/{cart}/line-items");
    for (body, field, code) in [
        (
            json!({"variantId": 1, "quantity": 1}),
            "productId",
            "REQUIRED",
        ),
        (
            json!({"productId": products[0].0, "quantity": 1}),
            "variantId",
            "REQUIRED",
        ),
        (
            json!({"productId": products[0].0, "variantId": 1, "quantity": 0}),
            "quantity",
            "OUT_OF_RANGE",
        ),
        (
            json!({"productId": products[0].0, "variantId": 1, "quantity": 100}),
            "quantity",
            "OUT_OF_RANGE",
        ),
        (
            json!({"productId": "no-such-product", "variantId": 1, "quantity": 1}),
            "productId",
            "INVALID_VALUE",
        ),
        (
            json!({"productId": products[0].0, "variantId": 77, "quantity": 1}),
            "variantId",
            "INVALID_VALUE",
        ),
        (
            json!({"productId": products[0].0, "variantId": 1, "quantity": "two"}),
            "quantity",
            "INVALID_FORMAT",
        ),
    ] {
        let reply = shopper.send(Method::POST, &line, Some(body)).await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(reply.field_error(), (field, code));
    }
    let inactive = &t.ok("/products?limit=1&status=discontinued").await["results"][0]["id"];
    let reply = shopper
        .send(
            Method::POST,
            &line,
            Some(json!({"productId": inactive, "variantId": 1, "quantity": 1})),
        )
        .await;
    assert_eq!(reply.field_error(), ("productId", "INVALID_VALUE"));
    let reply = shopper
        .send(Method::POST, "/carts", Some(json!({"currencyCode": "GBP"})))
        .await;
    assert_eq!(reply.field_error(), ("currencyCode", "INVALID_VALUE"));
    let nzd = shopper
        .send(Method::POST, "/carts", Some(json!({"currencyCode": "NZD"})))
        .await;
    assert_eq!(nzd.body["currencyCode"], "NZD");

    let added = shopper.add(&cart, &products[0].0, 1, 2).await.body;
    let line_id = added["lineItems"][0]["id"].as_str().unwrap();
    let set = shopper
        .send(
            Method::PUT,
            &format!("{line}/{line_id}"),
            Some(json!({"quantity": 5})),
        )
        .await;
    assert_eq!(set.body["lineItems"][0]["quantity"], 5);
    assert_adds_up(&set.body);
    // Raising a quantity is checked against the stock as adding is.
    let detail = shopper
        .send(Method::GET, &format!("/products/{}", products[0].0), None)
        .await;
    let stock = detail.body["variants"][0]["availability"]["quantity"]
        .as_u64()
        .unwrap();
    assert!(stock < 99, "the demo keeps stock below the line maximum");
    let over = shopper
        .send(
            Method::PUT,
            &format!("{line}/{line_id}"),
            Some(json!({"quantity": stock + 1})),
        )
        .await;
    assert_eq!(over.status, 422, "{}", over.body);
    assert_eq!(over.field_error(), ("quantity", "OUT_OF_RANGE"));
    let stale = shopper
        .send(
            Method::PUT,
            &format!("/carts/{cart}"),
            Some(json!({"version": 1, "discountCode": null})),
        )
        .await;
    stale.error(409, "CONCURRENT_MODIFICATION");
    let current = set.body["version"].as_i64().unwrap();
    let fresh = shopper
        .send(
            Method::PUT,
            &format!("/carts/{cart}"),
            Some(json!({"version": current})),
        )
        .await;
    assert_eq!(fresh.status, 200);
    let removed = shopper
        .send(Method::DELETE, &format!("{line}/{line_id}"), None)
        .await;
    assert!(removed.body["lineItems"].as_array().unwrap().is_empty());
    assert_eq!(removed.body["totalPrice"]["centAmount"], 0);
    shopper
        .send(Method::DELETE, &format!("{line}/{line_id}"), None)
        .await
        .error(404, "NOT_FOUND");
    assert_eq!(
        shopper
            .send(Method::DELETE, &format!("/carts/{cart}"), None)
            .await
            .status,
        204
    );
    shopper
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await
        .error(404, "NOT_FOUND");
    t.send(
        t.request(Method::POST, "/carts")
            .header("X-Api-Version", "v1.0"),
    )
    .await
    .error(401, "UNAUTHORIZED");
}

both_backends!(carts_validate_their_input, validate_input);

#[tokio::test]
async fn discount_codes_explain_why_they_do_not_apply() {
    let t = spawn_mesh().await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let (cheap, _) = products.iter().find(|(_, shoe)| !shoe).unwrap().clone();
    let cart = shopper.cart().await;
    shopper.add(&cart, &cheap, 1, 1).await;
    let path = format!("/carts/{cart}");
    // A code is ASCII letters, digits, '-', '_' or '.', at most 64.
    for bad in ["SAVE 10", "ÉTÉ10", "a/b", "<script>", &"X".repeat(65)] {
        let reply = shopper
            .send(Method::PUT, &path, Some(json!({"discountCode": bad})))
            .await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(
            reply.field_error(),
            ("discountCode", "INVALID_FORMAT"),
            "{bad}"
        );
    }
    for (code, reason) in [
        ("NOPE", "not a valid"),
        ("SPRING25", "expired"),
        ("FUTURE30", "not active yet"),
        ("TAKE15", "at least 100.00 AUD"),
        ("SHOES20", "applies to nothing"),
    ] {
        let reply = shopper
            .send(Method::PUT, &path, Some(json!({"discountCode": code})))
            .await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(
            reply.field_error(),
            ("discountCode", "INVALID_VALUE"),
            "{code}"
        );
        assert!(
            reply.body["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains(reason),
            "{code}: {}",
            reply.body
        );
    }
    // Enough for TAKE15, which stacks with EXTRA5; WELCOME10 replaces both.
    let dear = t
        .ok("/products?limit=1&status=active&inStock=true&minPrice=12000")
        .await["results"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    shopper.add(&cart, &dear, 1, 1).await;
    let take = shopper
        .send(Method::PUT, &path, Some(json!({"discountCode": "TAKE15"})))
        .await;
    assert_eq!(take.body["discountTotal"]["centAmount"], 1500);
    let both = shopper
        .send(Method::PUT, &path, Some(json!({"discountCode": "EXTRA5"})))
        .await;
    assert_eq!(both.body["discountCodes"], json!(["TAKE15", "EXTRA5"]));
    let after_fixed = both.body["subtotal"]["centAmount"].as_i64().unwrap() - 1500;
    assert_eq!(
        both.body["discountTotal"]["centAmount"].as_i64().unwrap(),
        1500 + after_fixed * 5 / 100
    );
    assert_adds_up(&both.body);
    let replaced = shopper
        .send(
            Method::PUT,
            &path,
            Some(json!({"discountCode": "WELCOME10"})),
        )
        .await;
    assert_eq!(replaced.body["discountCodes"], json!(["WELCOME10"]));
    let cleared = shopper
        .send(Method::PUT, &path, Some(json!({"discountCode": null})))
        .await;
    assert_eq!(cleared.body["discountCodes"], json!([]));
    assert_eq!(cleared.body["discountTotal"]["centAmount"], 0);

    let promotions = t.ok("/promotions").await;
    let keys: Vec<&str> = promotions["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"welcome") && keys.contains(&"take15"));
    assert!(
        !keys.contains(&"spring") && !keys.contains(&"future"),
        "only active promotions"
    );
    let shoes = promotions["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "shoes")
        .unwrap();
    assert_eq!(shoes["categoryIds"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn checkout_refuses_empty_changed_and_expired() {
    let t = spawn_mesh_on(Backend::Memory, &[("CHECKOUT_TTL_SECS", "1")]).await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let cart = shopper.cart().await;
    let empty = shopper.checkout(&cart).await;
    empty.error(422, "VALIDATION_ERROR");
    assert_eq!(empty.field_error(), ("cartId", "INVALID_VALUE"));
    shopper.add(&cart, &products[0].0, 1, 1).await;
    let unknown = shopper
        .send(
            Method::POST,
            "/checkout",
            Some(json!({"cartId": cart, "shippingAddressId": "nowhere"})),
        )
        .await;
    assert_eq!(
        unknown.field_error(),
        ("shippingAddressId", "INVALID_VALUE")
    );
    let missing = shopper
        .send(Method::POST, "/checkout", Some(json!({"cartId": cart})))
        .await;
    assert_eq!(missing.field_error(), ("shippingAddressId", "REQUIRED"));

    let session = shopper.checkout(&cart).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    shopper.add(&cart, &products[1].0, 1, 1).await;
    shopper.confirm(&session).await.error(409, "CART_CHANGED");

    let session = shopper.checkout(&cart).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(
        shopper
            .send(Method::GET, &format!("/checkout/{session}"), None)
            .await
            .body["status"],
        "EXPIRED"
    );
    let expired = shopper.confirm(&session).await;
    expired.error(409, "CHECKOUT_EXPIRED");
    assert_eq!(expired.body["type"], "conflict_error");
    let text = t
        .request(Method::POST, &format!("/checkout/{session}/confirm"))
        .header("X-Api-Version", "v1.0")
        .header("X-BFF-Token", &shopper.token)
        .header("Content-Type", "text/plain")
        .body("confirm please");
    t.send(text).await.error(415, "UNSUPPORTED_MEDIA_TYPE");
}
