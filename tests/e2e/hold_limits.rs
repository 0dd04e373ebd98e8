//! Issue 44 item 1: a hoarder cannot hold the shop's stock. Guests from
//! one client network check out every unit they can (the finding's
//! script, made small): what the network holds stays within its limits,
//! a checkout past them holds nothing until it is paid (issue 47 item 5),
//! one past what a payment allows is a 409 `HOLD_LIMIT_REACHED` naming
//! its setting, and a customer on another network buys the last units. A
//! paid checkout past the limits holds its lines, or is released and its
//! payment voided when they are gone. A cart checked out again never
//! holds past its first expiry plus one extension; checkout opens have
//! their own budget.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Backend, Reply, TestMesh, spawn_mesh_on};
use crate::journey::Shopper;
use crate::stock::product_with;

/// A guest of client network `from` (an address behind the trusted proxy).
struct Guest<'a> {
    t: &'a TestMesh,
    from: String,
    token: String,
}

impl<'a> Guest<'a> {
    async fn new(t: &'a TestMesh, from: &str) -> Self {
        let started = t
            .send(
                t.json(Method::POST, "/auth/guest", None, &json!({}))
                    .header("X-Forwarded-For", from),
            )
            .await;
        assert_eq!(started.status, 201, "{}", started.body);
        let token = started.body["accessToken"].as_str().unwrap().to_string();
        Self {
            t,
            from: from.to_string(),
            token,
        }
    }

    async fn send(&self, method: Method, path: &str, body: Value) -> Reply {
        let request = self
            .t
            .json(method, path, Some(&self.token), &body)
            .header("X-Forwarded-For", &self.from);
        self.t.send(request).await
    }

    async fn get(&self, path: &str) -> Reply {
        let request = self
            .t
            .authed(Method::GET, path, &self.token)
            .header("X-Forwarded-For", &self.from);
        self.t.send(request).await
    }

    /// A cart with `quantity` of the product's one variant.
    async fn cart_of(&self, product: &str, quantity: u64) -> String {
        let cart = self.send(Method::POST, "/carts", json!({})).await;
        assert_eq!(cart.status, 201, "{}", cart.body);
        let id = cart.body["id"].as_str().unwrap().to_string();
        let line = json!({"productId": product, "variantId": 1, "quantity": quantity});
        let added = self
            .send(Method::POST, &format!("/carts/{id}/line-items"), line)
            .await;
        assert_eq!(added.status, 200, "{}", added.body);
        id
    }

    async fn checkout(&self, cart: &str) -> Reply {
        let to = json!({"firstName": "Mallory", "lastName": "H", "streetName": "Pitt St",
            "city": "Sydney", "postalCode": "2000", "country": "AU"});
        let body = json!({"cartId": cart, "shippingAddress": to});
        self.send(Method::POST, "/checkout", body).await
    }
}

fn refused_by(reply: &Reply, setting: &str) {
    assert_eq!(reply.status, 409, "{}", reply.body);
    assert_eq!(reply.body["code"], "HOLD_LIMIT_REACHED", "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap();
    assert!(message.contains(setting), "{message} names {setting}");
    assert!(!reply.body["errors"].as_array().unwrap().is_empty());
}

async fn available(t: &TestMesh, id: &str) -> u64 {
    let product = t.ok(&format!("/products/{id}")).await;
    product["variants"][0]["availability"]["quantity"]
        .as_u64()
        .unwrap()
}

async fn a_network_of_guests_cannot_hold_the_shop(backend: Backend) {
    let t = spawn_mesh_on(
        backend,
        &[
            ("TRUSTED_PROXIES", "127.0.0.1"),
            ("HOLD_LIMIT_PER_VARIANT_NETWORK", "25"),
            ("HOLD_LIMIT_TOTAL_NETWORK", "60"),
            ("HOLD_LIMIT_PAID_MULTIPLE", "3"),
        ],
    )
    .await;
    product_with(&t, "p-hoard", 40).await;

    // One guest, the whole stock: past even what a payment allows
    // (3 x HOLD_LIMIT_PER_VARIANT): refused whole, nothing held.
    let greedy = Guest::new(&t, "198.51.100.7").await;
    let all = greedy.cart_of("p-hoard", 40).await;
    refused_by(&greedy.checkout(&all).await, "HOLD_LIMIT_PAID_MULTIPLE");
    assert_eq!(
        available(&t, "p-hoard").await,
        40,
        "a refusal holds nothing"
    );
    // Past the guest's limit but within the paid one: open, holding
    // nothing until paid.
    let some = greedy.cart_of("p-hoard", 20).await;
    let unpaid = greedy.checkout(&some).await;
    assert_eq!(unpaid.status, 201, "{}", unpaid.body);
    assert_eq!(unpaid.body["awaitingPayment"], true, "{}", unpaid.body);
    assert_eq!(available(&t, "p-hoard").await, 40, "unpaid, nothing held");

    // Guest after guest of the network, ten each: the network's bound.
    let mut held = 0;
    let mut sessions = Vec::new();
    for i in 0..5 {
        let guest = Guest::new(&t, &format!("198.51.100.{}", 10 + i)).await;
        let cart = guest.cart_of("p-hoard", 10).await;
        let opened = guest.checkout(&cart).await;
        assert_eq!(opened.status, 201, "{}", opened.body);
        if opened.body["awaitingPayment"] == false {
            held += 10;
            sessions.push((guest, cart));
        }
    }
    assert_eq!(held, 20, "two guests of ten fit the network's 25");
    assert_eq!(available(&t, "p-hoard").await, 20);

    // A cart checked out again counts once, not twice.
    let (guest, cart) = &sessions[0];
    let again = guest.checkout(cart).await;
    assert_eq!(again.status, 201, "{}", again.body);
    assert_eq!(available(&t, "p-hoard").await, 20);

    // A customer on another network buys the last units.
    let buyer = Shopper::new(&t).await;
    let cart = buyer.cart().await;
    assert_eq!(buyer.add(&cart, "p-hoard", 1, 20).await.status, 200);
    let session = buyer.checkout(&cart).await;
    assert_eq!(session.status, 201, "{}", session.body);
    let id = session.body["id"].as_str().unwrap();
    let confirmed = buyer.confirm(id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(available(&t, "p-hoard").await, 0);
    println!("hoarding, small: the network held {held} of 40 units; the other network bought 20");
}

#[tokio::test]
async fn a_network_of_guests_cannot_hold_the_shop_memory() {
    a_network_of_guests_cannot_hold_the_shop(Backend::Memory).await;
}

#[tokio::test]
async fn a_network_of_guests_cannot_hold_the_shop_redis() {
    a_network_of_guests_cannot_hold_the_shop(Backend::Redis).await;
}

/// Past the guest's limit a checkout holds nothing and cannot be
/// confirmed; paid, it holds and confirms. Another, paid when its units
/// were sold meanwhile, is released with its payment voided.
async fn a_hold_past_the_limit_is_taken_once_paid(backend: Backend) {
    let t = spawn_mesh_on(
        backend,
        &[
            ("TRUSTED_PROXIES", "127.0.0.1"),
            ("HOLD_LIMIT_PER_VARIANT", "5"),
            ("HOLD_LIMIT_TOTAL", "10"),
        ],
    )
    .await;
    product_with(&t, "p-paid", 30).await;
    let guest = Guest::new(&t, "198.51.100.20").await;
    let cart = guest.cart_of("p-paid", 12).await;
    let opened = guest.checkout(&cart).await;
    assert_eq!(opened.status, 201, "{}", opened.body);
    assert_eq!(opened.body["awaitingPayment"], true, "{}", opened.body);
    let id = opened.body["id"].as_str().unwrap().to_string();
    let confirm = format!("/checkout/{id}/confirm");
    guest
        .send(Method::POST, &confirm, json!({}))
        .await
        .error(402, "PAYMENT_REQUIRED");
    assert_eq!(available(&t, "p-paid").await, 30);

    // Paid by four calls at once: held once.
    let visa = json!({"paymentMethod": "pm_card_visa"});
    let payment = format!("/checkout/{id}/payment");
    let calls = (0..4).map(|_| guest.send(Method::POST, &payment, visa.clone()));
    for paid in futures::future::join_all(calls).await {
        assert!(paid.status.is_success(), "{}", paid.body);
        assert_eq!(paid.body["status"], "authorized", "{}", paid.body);
    }
    let session = guest.get(&format!("/checkout/{id}")).await;
    assert_eq!(session.body["awaitingPayment"], false, "{}", session.body);
    assert_eq!(available(&t, "p-paid").await, 18, "paid, held");
    let confirmed = guest.send(Method::POST, &confirm, json!({})).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(available(&t, "p-paid").await, 18);

    // Unpaid, it held nothing, so the units could be sold meanwhile.
    let late = Guest::new(&t, "203.0.113.20").await;
    let cart = late.cart_of("p-paid", 12).await;
    let opened = late.checkout(&cart).await;
    assert_eq!(opened.body["awaitingPayment"], true, "{}", opened.body);
    let late_id = opened.body["id"].as_str().unwrap().to_string();
    let buyer = Shopper::new(&t).await;
    let bought = buyer.cart().await;
    assert_eq!(buyer.add(&bought, "p-paid", 1, 15).await.status, 200);
    let session = buyer.checkout(&bought).await;
    let bought_id = session.body["id"].as_str().unwrap();
    assert_eq!(buyer.confirm(bought_id).await.status, 200);
    let payment = format!("/checkout/{late_id}/payment");
    let short = late.send(Method::POST, &payment, visa).await;
    short.error(409, "INSUFFICIENT_STOCK");
    let after = late.get(&format!("/checkout/{late_id}")).await;
    assert_eq!(after.body["status"], "EXPIRED", "{}", after.body);
    assert_eq!(after.body["payment"]["status"], "voided", "{}", after.body);
    assert_eq!(available(&t, "p-paid").await, 3, "nothing of it held");
}

#[tokio::test]
async fn a_hold_past_the_limit_is_taken_once_paid_memory() {
    a_hold_past_the_limit_is_taken_once_paid(Backend::Memory).await;
}

#[tokio::test]
async fn a_hold_past_the_limit_is_taken_once_paid_redis() {
    a_hold_past_the_limit_is_taken_once_paid(Backend::Redis).await;
}

fn expires_ms(reply: &Reply) -> i64 {
    assert!(reply.status.is_success(), "{}", reply.body);
    let at = reply.body["expiresAt"].as_str().unwrap();
    let parsed = time_of(at);
    assert!(parsed > 0, "{at}");
    parsed
}

/// Milliseconds since the epoch of an RFC 3339 UTC time.
fn time_of(at: &str) -> i64 {
    let (date, time) = at.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let t: Vec<i64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    let ms: i64 = format!("{frac:0<3}")[..3].parse().unwrap();
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2]) * 1000) + ms
}

/// Checked out again and extended, a cart's hold still ends by its first
/// expiry plus one checkout time; a guest's checkout time is its own.
#[tokio::test]
async fn checking_out_again_never_moves_a_hold_past_one_extension() {
    let t = spawn_mesh_on(
        Backend::Memory,
        &[("CHECKOUT_TTL_SECS", "8"), ("CHECKOUT_TTL_GUEST_SECS", "4")],
    )
    .await;
    product_with(&t, "p-window", 3).await;
    let guest = Guest::new(&t, "198.51.100.1").await;
    let cart = guest.cart_of("p-window", 1).await;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let first = guest.checkout(&cart).await;
    let first_expiry = expires_ms(&first);
    let ttl = first_expiry - before;
    assert!(
        (3_000..=5_000).contains(&ttl),
        "a guest's 4 s, not 8: {ttl}"
    );
    let cap = first_expiry + 4_000;
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        let again = guest.checkout(&cart).await;
        assert!(expires_ms(&again) <= cap, "{}", again.body);
        let id = again.body["id"].as_str().unwrap();
        let extend = format!("/checkout/{id}/extend");
        let extended = guest.send(Method::POST, &extend, json!({})).await;
        if extended.status == 200 {
            assert!(expires_ms(&extended) <= cap, "{}", extended.body);
        } else {
            extended.error(409, "CHECKOUT_ALREADY_EXTENDED");
        }
    }
}

/// Checkouts opened per network and per session have their own budget.
#[tokio::test]
async fn checkout_opens_have_their_own_budget() {
    let t = spawn_mesh_on(
        Backend::Memory,
        &[
            ("TRUSTED_PROXIES", "127.0.0.1"),
            ("RATE_LIMIT_CHECKOUT", "3/60s"),
        ],
    )
    .await;
    product_with(&t, "p-budget", 50).await;
    let guest = Guest::new(&t, "198.51.100.1").await;
    let cart = guest.cart_of("p-budget", 1).await;
    for _ in 0..3 {
        assert_eq!(guest.checkout(&cart).await.status, 201);
    }
    let over = guest.checkout(&cart).await;
    over.error(429, "RATE_LIMIT_EXCEEDED");
    assert!(over.headers.contains_key("retry-after"));
    // Another network's shopper is not held back.
    let other = Guest::new(&t, "203.0.113.9").await;
    let cart = other.cart_of("p-budget", 1).await;
    assert_eq!(other.checkout(&cart).await.status, 201);
}
