//! Guest shoppers (issue 29 item 2) through the gateway on both stores: a
//! guest session keeps carts and checks out with its address in the body,
//! refreshes like a customer's, ends at logout, is 403 wherever an account
//! is needed, and is started at most so often per IP.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, Reply, TestMesh, spawn_mesh_on};
use crate::journey::buyable;

async fn start(t: &TestMesh) -> Reply {
    t.send(t.json(Method::POST, "/auth/guest", None, &json!({})))
        .await
}

fn token_of(reply: &Reply) -> String {
    assert_eq!(reply.status.as_u16() / 100, 2, "{}", reply.body);
    reply.body["accessToken"].as_str().unwrap().to_string()
}

async fn send(t: &TestMesh, method: Method, path: &str, token: &str, body: Option<Value>) -> Reply {
    let request = match body {
        Some(body) => t.json(method, path, Some(token), &body),
        None => t.authed(method, path, token),
    };
    t.send(request).await
}

fn address() -> Value {
    json!({"firstName": "Grace", "lastName": "H", "streetName": "George St", "city": "Sydney",
        "postalCode": "2000", "state": "NSW", "country": "AU"})
}

async fn a_guest_shops_without_an_account(t: TestMesh) {
    let started = start(&t).await;
    assert_eq!(started.status, 201, "{}", started.body);
    assert_eq!(started.body["tokenType"], "Bearer");
    assert!(
        started.body["refreshToken"]
            .as_str()
            .is_some_and(|r| !r.is_empty())
    );
    assert!(started.body.get("customer").is_none(), "{}", started.body);
    let token = token_of(&started);

    // Profile, addresses, preferences, sessions, orders: an account's.
    for (method, path) in [
        (Method::GET, "/customers/me"),
        (Method::GET, "/customers/me/addresses"),
        (Method::GET, "/customers/me/preferences"),
        (Method::GET, "/customers/me/sessions"),
        (Method::GET, "/orders"),
    ] {
        send(&t, method, path, &token, None)
            .await
            .error(403, "FORBIDDEN");
    }

    // Carts and checkout, with the address in the body.
    let cart = send(&t, Method::POST, "/carts", &token, None).await;
    assert_eq!(cart.status, 201, "{}", cart.body);
    let cart_id = cart.body["id"].as_str().unwrap().to_string();
    let product = buyable(&t, 1).await[0].0.clone();
    let line = json!({"productId": product, "variantId": 1, "quantity": 1});
    let added = send(
        &t,
        Method::POST,
        &format!("/carts/{cart_id}/line-items"),
        &token,
        Some(line),
    )
    .await;
    assert_eq!(added.status, 200, "{}", added.body);
    let checkout = |body: Value| send(&t, Method::POST, "/checkout", &token, Some(body));
    let none = checkout(json!({"cartId": cart_id})).await;
    none.error(422, "VALIDATION_ERROR");
    assert_eq!(none.field_error(), ("shippingAddress", "REQUIRED"));
    let book = checkout(json!({"cartId": cart_id, "shippingAddressId": "a-1"})).await;
    assert_eq!(book.field_error().0, "shippingAddressId", "{}", book.body);
    let mut no_city = address();
    no_city["city"] = json!(" ");
    let bad = checkout(json!({"cartId": cart_id, "shippingAddress": no_city})).await;
    bad.error(422, "VALIDATION_ERROR");
    assert_eq!(bad.field_error(), ("shippingAddress.city", "REQUIRED"));
    let opened = checkout(json!({"cartId": cart_id, "shippingAddress": address()})).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    assert_eq!(opened.body["shippingAddress"]["city"], "Sydney");
    let session = opened.body["id"].as_str().unwrap();
    let paid = send(
        &t,
        Method::POST,
        &format!("/checkout/{session}/payment"),
        &token,
        Some(json!({"paymentMethod": "pm_card_visa"})),
    )
    .await;
    assert_eq!(paid.status, 201, "{}", paid.body);
    assert_eq!(paid.body["status"], "authorized");
    let confirmed = send(
        &t,
        Method::POST,
        &format!("/checkout/{session}/confirm"),
        &token,
        None,
    )
    .await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert!(confirmed.body["orderId"].as_str().is_some());

    // Refreshed as a guest: still a guest's token, still the guest's carts.
    let refresh = started.body["refreshToken"].clone();
    let body = json!({"grantType": "refresh_token", "refreshToken": refresh});
    let refreshed = t
        .send(t.json(Method::POST, "/auth/token", None, &body))
        .await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.body);
    assert!(refreshed.body.get("customer").is_none());
    let token = token_of(&refreshed);
    let read = send(&t, Method::GET, &format!("/carts/{cart_id}"), &token, None).await;
    assert_eq!(read.status, 200, "{}", read.body);
    send(&t, Method::GET, "/customers/me", &token, None)
        .await
        .error(403, "FORBIDDEN");

    // Logged out: the token stops working.
    let out = send(&t, Method::POST, "/auth/logout", &token, None).await;
    assert_eq!(out.status, 204, "{}", out.body);
    let after = send(&t, Method::GET, &format!("/carts/{cart_id}"), &token, None).await;
    assert_eq!(after.status, 401, "{}", after.body);
}
crate::both_backends!(
    a_guest_shops_without_an_account_live,
    a_guest_shops_without_an_account
);

/// A customer may also ship to an address given in the body, but not to
/// two at once.
async fn a_customer_may_ship_to_a_one_off_address(t: TestMesh) {
    let shopper = crate::journey::Shopper::new(&t).await;
    let cart = shopper.cart().await;
    let product = buyable(&t, 1).await[0].0.clone();
    assert_eq!(shopper.add(&cart, &product, 1, 1).await.status, 200);
    let both = json!({"cartId": cart, "shippingAddressId": "a-1", "shippingAddress": address()});
    let refused = shopper.send(Method::POST, "/checkout", Some(both)).await;
    assert_eq!(
        refused.field_error().0,
        "shippingAddress",
        "{}",
        refused.body
    );
    let one_off = json!({"cartId": cart, "shippingAddress": address()});
    let opened = shopper.send(Method::POST, "/checkout", Some(one_off)).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
}

#[tokio::test]
async fn a_customer_may_ship_to_a_one_off_address_memory() {
    a_customer_may_ship_to_a_one_off_address(spawn_mesh_on(Backend::Memory, &[]).await).await;
}

#[tokio::test]
async fn guest_sessions_are_limited_per_ip() {
    let t = spawn_mesh_on(Backend::Memory, &[("RATE_LIMIT_GUEST", "2/60s")]).await;
    for _ in 0..2 {
        assert_eq!(start(&t).await.status, 201);
    }
    let third = start(&t).await;
    third.error(429, "RATE_LIMIT_EXCEEDED");
    assert!(third.header("retry-after").is_some());
}

/// Sixteen logins at once with one guest's token: the guest's cart is
/// merged into the customer's once (quantities summed once, a line out of
/// stock dropped with its reason), every login that merged reports the
/// same, and the guest's token stops working.
async fn a_guest_cart_is_merged_once_at_login(t: TestMesh) {
    let products = buyable(&t, 3).await;
    let (a, b) = (products[0].0.clone(), products[1].0.clone());
    crate::stock::product_with(&t, "p-merge-last", 1).await;
    let email = format!("merge-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let customer = token_of(&t.log_in(&email, "correct horse 42").await);
    let add = async |token: &str, cart: &str, product: &str, quantity: u64| {
        let line = json!({"productId": product, "variantId": 1, "quantity": quantity});
        let path = format!("/carts/{cart}/line-items");
        let added = send(&t, Method::POST, &path, token, Some(line)).await;
        assert_eq!(added.status, 200, "{}", added.body);
    };
    let mine = send(&t, Method::POST, "/carts", &customer, None).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    add(&customer, &mine, &a, 1).await;

    let guest = token_of(&start(&t).await);
    let theirs = send(&t, Method::POST, "/carts", &guest, None).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    add(&guest, &theirs, &a, 2).await;
    add(&guest, &theirs, &b, 1).await;
    add(&guest, &theirs, "p-merge-last", 1).await;
    let sold_out = json!({"changes": [{"sku": "p-merge-last-1", "quantity": 0}]});
    let request = crate::catalog_changes::internal(
        &t,
        crate::catalog_changes::MERCHANDISING,
        Method::POST,
        "/internal/catalog/stock",
    );
    assert_eq!(t.send(request.json(&sold_out)).await.status, 200);

    let body = json!({"emailAddress": email, "password": "correct horse 42", "gRecaptchaResponse": "dev-ok"});
    let logins = (0..16).map(|_| t.send(t.json(Method::POST, "/auth/login", Some(&guest), &body)));
    let replies = futures::future::join_all(logins).await;
    let reports: Vec<&Value> = replies
        .iter()
        .inspect(|r| assert_eq!(r.status, 200, "{}", r.body))
        .filter_map(|r| r.body.get("mergeReport"))
        .collect();
    assert!(!reports.is_empty(), "a login merged");
    assert!(
        reports.iter().all(|r| *r == reports[0]),
        "one merge, one report"
    );
    let report = reports[0];
    assert_eq!(report["cartId"], mine.as_str(), "{report}");
    assert_eq!(report["quantitiesChanged"][0]["productId"], a.as_str());
    assert_eq!(report["quantitiesChanged"][0]["previousQuantity"], 1);
    assert_eq!(report["quantitiesChanged"][0]["quantity"], 3);
    assert_eq!(report["linesAdded"][0]["productId"], b.as_str());
    assert_eq!(report["linesDropped"][0]["productId"], "p-merge-last");
    let reason = report["linesDropped"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("out of stock"), "{reason}");

    let cart = send(&t, Method::GET, &format!("/carts/{mine}"), &customer, None).await;
    let quantity_of = |product: &str| {
        cart.body["lineItems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["productId"] == product)
            .map(|l| l["quantity"].as_u64().unwrap())
    };
    assert_eq!(quantity_of(&a), Some(3), "summed once: {}", cart.body);
    assert_eq!(quantity_of(&b), Some(1));
    assert_eq!(quantity_of("p-merge-last"), None);
    let after = send(&t, Method::GET, &format!("/carts/{theirs}"), &guest, None).await;
    assert_eq!(after.status, 401, "the guest's token ended: {}", after.body);
}
crate::both_backends!(
    a_guest_cart_is_merged_once_at_login_live,
    a_guest_cart_is_merged_once_at_login
);

/// `CART_MERGE_STRATEGY=keep-guest`: the guest's cart becomes a new cart
/// of the customer's, whose own cart is left as it was.
#[tokio::test]
async fn the_keep_guest_strategy_keeps_the_guest_cart_whole() {
    let t = spawn_mesh_on(Backend::Memory, &[("CART_MERGE_STRATEGY", "keep-guest")]).await;
    let product = buyable(&t, 2).await[0].0.clone();
    let email = format!("keep-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let customer = token_of(&t.log_in(&email, "correct horse 42").await);
    let mine = send(&t, Method::POST, "/carts", &customer, None).await.body["id"].clone();
    let guest = token_of(&start(&t).await);
    let theirs = send(&t, Method::POST, "/carts", &guest, None).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let line = json!({"productId": product, "variantId": 1, "quantity": 2});
    let path = format!("/carts/{theirs}/line-items");
    assert_eq!(
        send(&t, Method::POST, &path, &guest, Some(line))
            .await
            .status,
        200
    );
    let body = json!({"emailAddress": email, "password": "correct horse 42", "gRecaptchaResponse": "dev-ok"});
    let login = t
        .send(t.json(Method::POST, "/auth/login", Some(&guest), &body))
        .await;
    let report = &login.body["mergeReport"];
    let kept = report["cartId"].as_str().unwrap();
    assert_ne!(kept, mine.as_str().unwrap(), "a cart of its own: {report}");
    assert_eq!(report["linesAdded"][0]["quantity"], 2);
    let cart = send(&t, Method::GET, &format!("/carts/{kept}"), &customer, None).await;
    assert_eq!(cart.body["lineItems"][0]["quantity"], 2, "{}", cart.body);
    let untouched = send(
        &t,
        Method::GET,
        &format!("/carts/{}", mine.as_str().unwrap()),
        &customer,
        None,
    )
    .await;
    assert_eq!(untouched.body["lineItems"], json!([]));
}

/// Issue 44 item 7: a guest whose cart is in checkout logs in: the lines
/// move into the customer's cart with the units their checkout held, and
/// no unit stays held by the guest's session.
async fn a_guest_in_checkout_keeps_its_lines_at_login(t: TestMesh) {
    crate::stock::product_with(&t, "p-merge-held", 2).await;
    let email = format!("held-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let guest = token_of(&start(&t).await);
    let cart = send(&t, Method::POST, "/carts", &guest, None).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let line = json!({"productId": "p-merge-held", "variantId": 1, "quantity": 2});
    let path = format!("/carts/{cart}/line-items");
    assert_eq!(
        send(&t, Method::POST, &path, &guest, Some(line))
            .await
            .status,
        200
    );
    let body = json!({"cartId": cart, "shippingAddress": address()});
    let session = send(&t, Method::POST, "/checkout", &guest, Some(body)).await;
    assert_eq!(session.status, 201, "{}", session.body);
    let available = async || {
        t.ok("/products/p-merge-held").await["variants"][0]["availability"]["quantity"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(available().await, 0, "held by the guest's checkout");

    let login = json!({"emailAddress": email, "password": "correct horse 42", "gRecaptchaResponse": "dev-ok"});
    let reply = t
        .send(t.json(Method::POST, "/auth/login", Some(&guest), &login))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let report = &reply.body["mergeReport"];
    assert_eq!(
        report["linesAdded"][0]["productId"], "p-merge-held",
        "{report}"
    );
    assert_eq!(report["linesAdded"][0]["quantity"], 2, "{report}");
    let dropped = report["linesDropped"].as_array();
    assert!(dropped.is_none_or(|d| d.is_empty()), "{report}");
    assert_eq!(available().await, 2, "nothing stranded");
    let customer = token_of(&reply);
    let mine = report["cartId"].as_str().unwrap();
    let body = json!({"cartId": mine, "shippingAddress": address()});
    let again = send(&t, Method::POST, "/checkout", &customer, Some(body)).await;
    assert_eq!(
        again.status, 201,
        "the customer checks the lines out: {}",
        again.body
    );
}
crate::both_backends!(
    a_guest_in_checkout_keeps_its_lines_at_login_live,
    a_guest_in_checkout_keeps_its_lines_at_login
);
