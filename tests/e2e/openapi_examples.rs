//! Issue 48 item 3: every operation of the served document carries a
//! request example (where it takes a body) and a response example, and
//! each is a real answer: this journey calls every operation, and each
//! example must have the shape of what the mesh answers now (the same
//! fields, the same JSON types, recursively). Run with
//! `WRITE_EXAMPLES=1` to record the answers into
//! `gateway/src/openapi/examples.json`, which the gateway puts into
//! `/openapi.json`.

use std::collections::BTreeMap;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::buyable;

const FILE: &str = "gateway/src/openapi/examples.json";
/// Operations whose answer is no JSON resource: the document itself, the
/// reference page and its script, the root's redirect.
const NOT_JSON: [&str; 5] = [
    "GET /media/demo/{key}/{file}",
    "GET /openapi.json",
    "GET /docs",
    "GET /docs/redoc.standalone.js",
    "GET /",
];

/// What the journey met: per operation, its request and its answer.
#[derive(Default)]
struct Recorded(BTreeMap<String, Value>);

struct Journey<'a> {
    t: &'a TestMesh,
    token: Option<String>,
    seen: Recorded,
}

impl Journey<'_> {
    /// Calls `method path` as operation `template`, which must succeed;
    /// records the request body and the answer.
    async fn call(
        &mut self,
        method: Method,
        template: &str,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let mut request = self
            .t
            .request(method.clone(), path)
            .header("X-Api-Version", "v1.0");
        if let Some(token) = &self.token {
            request = request.header("X-BFF-Token", token);
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let reply = self.t.send(request).await;
        assert!(
            reply.status.is_success(),
            "{method} {path}: {} {}",
            reply.status,
            reply.body
        );
        let key = format!("{method} {template}");
        let mut entry = json!({"status": reply.status.as_u16(), "response": reply.body});
        if let Some(body) = body {
            entry["request"] = body;
        }
        self.seen.0.entry(key).or_insert(entry);
        reply.body
    }

    async fn get(&mut self, template: &str, path: &str) -> Value {
        self.call(Method::GET, template, path, None).await
    }
}

fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an id in {v}"))
        .to_string()
}

/// The catalog, content and search: no token.
async fn browse(j: &mut Journey<'_>) {
    j.get("/health/live", "/health/live").await;
    j.get("/health/ready", "/health/ready").await;
    let product = id(&j.get("/products", "/products?limit=1").await["results"][0]);
    j.get("/products/{productId}", &format!("/products/{product}"))
        .await;
    let variants = j
        .get(
            "/products/{productId}/variants",
            &format!("/products/{product}/variants"),
        )
        .await;
    let variant = variants["results"][0]["id"].clone();
    let path = format!("/products/{product}/variants/{variant}");
    j.get("/products/{productId}/variants/{variantId}", &path)
        .await;
    j.get(
        "/products/{productId}/media",
        &format!("/products/{product}/media"),
    )
    .await;
    let category = id(&j.get("/categories", "/categories?limit=1").await["results"][0]);
    j.get("/categories/tree", "/categories/tree").await;
    j.get(
        "/categories/{categoryId}",
        &format!("/categories/{category}"),
    )
    .await;
    let collection = id(&j.get("/collections", "/collections?limit=1").await["results"][0]);
    j.get(
        "/collections/{collectionId}",
        &format!("/collections/{collection}"),
    )
    .await;
    j.get("/promotions", "/promotions?limit=1").await;
    j.get("/markets", "/markets").await;
    j.get("/content/banners", "/content/banners").await;
    j.get("/content/footer", "/content/footer").await;
    j.get("/content/pages/{slug}", "/content/pages/shipping")
        .await;
    j.get("/search", "/search?query=lamp&limit=1").await;
    j.get("/search/suggestions", "/search/suggestions?query=la")
        .await;
}

/// A customer's account, addresses, preferences and sessions.
async fn account(j: &mut Journey<'_>) -> (String, String) {
    let email = format!("examples-{}@example.com", uuid::Uuid::new_v4().simple());
    let password = "correct horse 42";
    let signup = json!({"emailAddress": email, "password": password, "firstName": "Ada", "lastName": "Lovelace", "gRecaptchaResponse": "dev-ok"});
    j.call(Method::POST, "/customers", "/customers", Some(signup))
        .await;
    let login =
        json!({"emailAddress": email, "password": password, "gRecaptchaResponse": "dev-ok"});
    let other = j
        .call(
            Method::POST,
            "/auth/login",
            "/auth/login",
            Some(login.clone()),
        )
        .await;
    let session = j
        .call(Method::POST, "/auth/login", "/auth/login", Some(login))
        .await;
    let refresh = json!({"grantType": "refresh_token", "refreshToken": session["refreshToken"]});
    let session = j
        .call(Method::POST, "/auth/token", "/auth/token", Some(refresh))
        .await;
    j.token = Some(session["accessToken"].as_str().unwrap().to_string());
    let me = "/customers/{customerId}";
    let read = j.get(me, "/customers/me").await;
    let update = json!({"version": read["version"], "firstName": "Ada", "lastName": "King"});
    j.call(Method::PUT, me, "/customers/me", Some(update)).await;
    let address = json!({"firstName": "Ada", "lastName": "King", "streetName": "George St", "streetNumber": "1", "city": "Sydney", "postalCode": "2000", "state": "NSW", "country": "AU"});
    let addresses = "/customers/{customerId}/addresses";
    let made = j
        .call(
            Method::POST,
            addresses,
            "/customers/me/addresses",
            Some(address.clone()),
        )
        .await;
    let spare = j
        .call(
            Method::POST,
            addresses,
            "/customers/me/addresses",
            Some(address.clone()),
        )
        .await;
    j.get(addresses, "/customers/me/addresses").await;
    let one = "/customers/{customerId}/addresses/{addressId}";
    j.get(one, &format!("/customers/me/addresses/{}", id(&made)))
        .await;
    let mut moved = address.clone();
    moved["streetNumber"] = json!("2");
    j.call(
        Method::PUT,
        one,
        &format!("/customers/me/addresses/{}", id(&made)),
        Some(moved),
    )
    .await;
    j.call(
        Method::DELETE,
        one,
        &format!("/customers/me/addresses/{}", id(&spare)),
        None,
    )
    .await;
    let prefs = "/customers/{customerId}/preferences";
    j.get(prefs, "/customers/me/preferences").await;
    let wanted =
        json!({"preferredLocale": "en-AU", "preferredCurrency": "AUD", "marketingEmails": true});
    j.call(
        Method::PUT,
        prefs,
        "/customers/me/preferences",
        Some(wanted),
    )
    .await;
    let sessions = j
        .get("/customers/{customerId}/sessions", "/customers/me/sessions")
        .await;
    let ended = sessions["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["current"] != true)
        .map(id)
        .unwrap_or_else(|| panic!("the other session in {sessions}"));
    let path = format!("/customers/me/sessions/{ended}");
    j.call(
        Method::DELETE,
        "/customers/{customerId}/sessions/{sessionId}",
        &path,
        None,
    )
    .await;
    drop(other);
    (id(&made), password.to_string())
}

async fn open_checkout(j: &mut Journey<'_>, cart: &str, address: &str) -> String {
    let open = json!({"cartId": cart, "shippingAddressId": address});
    id(&j
        .call(Method::POST, "/checkout", "/checkout", Some(open))
        .await)
}

/// A cart checked out, paid and confirmed; the order read and cancelled.
async fn buy(j: &mut Journey<'_>, address: &str) {
    let product = buyable(j.t, 5).await[0].0.clone();
    let carts = "/carts";
    let spare = j
        .call(
            Method::POST,
            carts,
            carts,
            Some(json!({"currencyCode": "AUD"})),
        )
        .await;
    j.call(
        Method::DELETE,
        "/carts/{cartId}",
        &format!("/carts/{}", id(&spare)),
        None,
    )
    .await;
    let cart = id(&j
        .call(
            Method::POST,
            carts,
            carts,
            Some(json!({"currencyCode": "AUD"})),
        )
        .await);
    let line = json!({"productId": product, "variantId": 1, "quantity": 2});
    let lines = "/carts/{cartId}/line-items";
    let added = j
        .call(
            Method::POST,
            lines,
            &format!("/carts/{cart}/line-items"),
            Some(line.clone()),
        )
        .await;
    let line_id = id(&added["lineItems"][0]);
    let one = "/carts/{cartId}/line-items/{lineItemId}";
    let path = format!("/carts/{cart}/line-items/{line_id}");
    j.call(Method::PUT, one, &path, Some(json!({"quantity": 1})))
        .await;
    j.call(Method::DELETE, one, &path, None).await;
    j.call(
        Method::POST,
        lines,
        &format!("/carts/{cart}/line-items"),
        Some(line),
    )
    .await;
    j.get("/carts/{cartId}", &format!("/carts/{cart}")).await;
    let update = json!({"discountCode": null});
    j.call(
        Method::PUT,
        "/carts/{cartId}",
        &format!("/carts/{cart}"),
        Some(update),
    )
    .await;
    let session = open_checkout(j, &cart, address).await;
    let at = |s: &str| format!("/checkout/{session}{s}");
    j.get("/checkout/{sessionId}", &at("")).await;
    let express = json!({"shippingMethodId": "express"});
    j.call(Method::PUT, "/checkout/{sessionId}", &at(""), Some(express))
        .await;
    j.call(
        Method::POST,
        "/checkout/{sessionId}/extend",
        &at("/extend"),
        None,
    )
    .await;
    let visa = json!({"paymentMethod": "pm_card_visa"});
    j.call(
        Method::POST,
        "/checkout/{sessionId}/payment",
        &at("/payment"),
        Some(visa),
    )
    .await;
    let confirmed = j
        .call(
            Method::POST,
            "/checkout/{sessionId}/confirm",
            &at("/confirm"),
            None,
        )
        .await;
    let order = confirmed["orderId"].as_str().unwrap().to_string();
    j.get("/orders", "/orders?limit=1").await;
    j.get(
        "/customers/{customerId}/orders",
        "/customers/me/orders?limit=1",
    )
    .await;
    j.get("/orders/{orderId}", &format!("/orders/{order}"))
        .await;
    let cancel = json!({"status": "CANCELLED"});
    j.call(
        Method::PUT,
        "/orders/{orderId}",
        &format!("/orders/{order}"),
        Some(cancel),
    )
    .await;
}

/// 3-D Secure on the test provider's page, and its webhook.
async fn three_d_secure(j: &mut Journey<'_>, address: &str) {
    let product = buyable(j.t, 5).await[0].0.clone();
    let cart = id(&j
        .call(
            Method::POST,
            "/carts",
            "/carts",
            Some(json!({"currencyCode": "AUD"})),
        )
        .await);
    let line = json!({"productId": product, "variantId": 1, "quantity": 1});
    j.call(
        Method::POST,
        "/carts/{cartId}/line-items",
        &format!("/carts/{cart}/line-items"),
        Some(line),
    )
    .await;
    let session = open_checkout(j, &cart, address).await;
    let three_ds = json!({"paymentMethod": "pm_card_threeDSecure2Required"});
    let path = format!("/checkout/{session}/payment");
    let payment = j
        .call(
            Method::POST,
            "/checkout/{sessionId}/payment",
            &path,
            Some(three_ds),
        )
        .await;
    let payment_id = id(&payment);
    let page = format!("/payments/test/{payment_id}/authenticate");
    let template = "/payments/test/{paymentId}/authenticate";
    j.call(Method::POST, template, &page, Some(json!({"passed": true})))
        .await;
    let event = json!({"id": format!("evt_{payment_id}"), "type": "payment_intent.amount_capturable_updated", "data": {"object": {"id": payment_id, "object": "payment_intent"}}});
    let bytes = event.to_string().into_bytes();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let secret = storefront_payments::config::DEV_TEST_WEBHOOK_SECRET;
    let signature = storefront_payments::webhook::sign(secret, now, &bytes);
    let request =
        j.t.http
            .post(format!("{}/webhooks/payments/test", j.t.base))
            .header("Stripe-Signature", signature)
            .header("Content-Type", "application/json")
            .body(bytes);
    let reply = j.t.send(request).await;
    assert!(reply.status.is_success(), "{}", reply.body);
    let entry = json!({"status": reply.status.as_u16(), "request": event, "response": reply.body});
    j.seen
        .0
        .insert("POST /webhooks/payments/{provider}".into(), entry);
}

/// The last of a session: a password change, then logout; a guest.
async fn leave(j: &mut Journey<'_>, password: &str) {
    let change = json!({"currentPassword": password, "newPassword": "correct horse 43"});
    let path = "/customers/{customerId}/password";
    j.call(Method::PUT, path, "/customers/me/password", Some(change))
        .await;
    j.call(
        Method::POST,
        "/auth/logout",
        "/auth/logout",
        Some(json!({})),
    )
    .await;
    j.token = None;
    j.call(Method::POST, "/auth/guest", "/auth/guest", None)
        .await;
}

/// Whether `example` has `live`'s shape: the same fields, recursively, of
/// the same JSON types (an empty array matches any).
fn same_shape(example: &Value, live: &Value, at: &str, problems: &mut Vec<String>) {
    match (example, live) {
        (Value::Object(e), Value::Object(l)) => {
            let (ek, lk): (Vec<_>, Vec<_>) = (e.keys().collect(), l.keys().collect());
            if ek != lk {
                problems.push(format!("{at}: fields {ek:?}, now {lk:?}"));
                return;
            }
            for (k, v) in e {
                same_shape(v, &l[k], &format!("{at}.{k}"), problems);
            }
        }
        (Value::Array(e), Value::Array(l)) => {
            if let (Some(e), Some(l)) = (e.first(), l.first()) {
                same_shape(e, l, &format!("{at}[0]"), problems);
            }
        }
        (Value::Number(_), Value::Number(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Null, Value::Null) => {}
        (e, l) => problems.push(format!("{at}: {e} was, {l} is")),
    }
}

/// The operations of the served document, as `METHOD /path`.
fn operations(doc: &Value) -> Vec<(String, Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if ["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                ops.push((format!("{} {path}", method.to_uppercase()), op.clone()));
            }
        }
    }
    ops
}

#[tokio::test]
async fn every_operation_has_examples_taken_from_real_answers() {
    let t = spawn_mesh_on(Backend::Memory, &[]).await;
    let mut j = Journey {
        t: &t,
        token: None,
        seen: Recorded::default(),
    };
    browse(&mut j).await;
    let (address, password) = account(&mut j).await;
    buy(&mut j, &address).await;
    three_d_secure(&mut j, &address).await;
    leave(&mut j, &password).await;
    let seen = j.seen.0;
    let file = format!("{}/{FILE}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("WRITE_EXAMPLES").is_some() {
        let text = serde_json::to_string_pretty(&seen).unwrap() + "\n";
        std::fs::write(&file, text).unwrap();
        println!("wrote {} operations' examples to {FILE}", seen.len());
    }
    let doc = t.ok("/openapi.json").await;
    let mut problems = Vec::new();
    for (key, op) in operations(&doc) {
        if NOT_JSON.contains(&key.as_str()) {
            continue;
        }
        let Some(live) = seen.get(&key) else {
            problems.push(format!("{key}: the journey does not call it"));
            continue;
        };
        let status = live["status"].to_string();
        let content = &op["responses"][&status]["content"]["application/json"];
        match content.get("example") {
            Some(example) => same_shape(example, &live["response"], &key, &mut problems),
            None if live["response"].is_null() => {}
            None => problems.push(format!("{key}: no response example for {status}")),
        }
        if let Some(request) = live.get("request") {
            let body = &op["requestBody"]["content"]["application/json"];
            match body.get("example") {
                Some(example) => {
                    same_shape(example, request, &format!("{key} request"), &mut problems)
                }
                None => problems.push(format!("{key}: no request example")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "examples that are not (or no longer) real answers; WRITE_EXAMPLES=1 records them:\n{}",
        problems.join("\n")
    );
}
