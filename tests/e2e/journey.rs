//! The customer journey through the gateway, on both backends: browse,
//! cart, discount, checkout, confirm, order history, cancel.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::{Api, Backend, Reply, TestMesh, spawn_mesh_on};

pub struct Shopper<'a> {
    pub t: &'a Api,
    pub token: String,
}

fn cents(v: &Value) -> i64 {
    v["centAmount"].as_i64().unwrap()
}

/// Money invariants every cart answer must keep.
pub fn assert_adds_up(cart: &Value) {
    let lines = cart["lineItems"].as_array().unwrap();
    let gross: i64 = lines
        .iter()
        .map(|l| cents(&l["unitPrice"]) * l["quantity"].as_i64().unwrap())
        .sum();
    let net: i64 = lines.iter().map(|l| cents(&l["totalPrice"])).sum();
    assert_eq!(
        cents(&cart["subtotal"]),
        gross,
        "subtotal = sum of unit x quantity"
    );
    assert_eq!(
        cents(&cart["totalPrice"]),
        net,
        "total = sum of line totals"
    );
    assert_eq!(
        cents(&cart["totalPrice"]),
        cents(&cart["subtotal"]) - cents(&cart["discountTotal"])
    );
    assert!(cents(&cart["totalPrice"]) >= 0 && cents(&cart["discountTotal"]) >= 0);
}

impl<'a> Shopper<'a> {
    pub async fn new(t: &'a Api) -> Self {
        let session = t.new_session().await;
        Self {
            t,
            token: session["accessToken"].as_str().unwrap().to_string(),
        }
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        let request = match body {
            Some(body) => self.t.json(method, path, Some(&self.token), &body),
            None => self.t.authed(method, path, &self.token),
        };
        self.t.send(request).await
    }

    pub async fn cart(&self) -> String {
        let reply = self.send(Method::POST, "/carts", None).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
        assert_eq!(reply.body["currencyCode"], "AUD");
        reply.body["id"].as_str().unwrap().to_string()
    }

    pub async fn add(&self, cart: &str, product: &str, variant: u64, quantity: u64) -> Reply {
        let body = json!({"productId": product, "variantId": variant, "quantity": quantity});
        self.send(
            Method::POST,
            &format!("/carts/{cart}/line-items"),
            Some(body),
        )
        .await
    }

    pub async fn address(&self) -> String {
        let body = json!({"firstName": "Ada", "lastName": "L", "streetName": "George St", "city": "Sydney", "postalCode": "2000", "country": "AU"});
        self.send(Method::POST, "/customers/me/addresses", Some(body))
            .await
            .body["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub async fn checkout(&self, cart: &str) -> Reply {
        let address = self.address().await;
        self.send(
            Method::POST,
            "/checkout",
            Some(json!({"cartId": cart, "shippingAddressId": address})),
        )
        .await
    }

    /// A new cart with one of `product` and a checkout opened for it: the
    /// checkout session's id.
    pub async fn checkout_one(&self, product: &str) -> String {
        let cart = self.cart().await;
        let added = self.add(&cart, product, 1, 1).await;
        assert!(added.status.is_success(), "{}", added.body);
        let session = self.checkout(&cart).await;
        assert_eq!(session.status, 201, "{}", session.body);
        session.body["id"].as_str().unwrap().to_string()
    }

    /// Pays the session with the test provider's `method`.
    pub async fn pay(&self, session: &str, method: &str) -> Reply {
        let body = json!({"paymentMethod": method});
        let path = format!("/checkout/{session}/payment");
        self.send(Method::POST, &path, Some(body)).await
    }

    /// Pays the session with the test card that authorizes (as a shopper
    /// does before confirming; a session that cannot be paid answers its
    /// refusal to the confirm too), then confirms it.
    pub async fn confirm(&self, session: &str) -> Reply {
        self.pay(session, "pm_card_visa").await;
        self.confirm_only(session).await
    }

    /// Confirms the session as it stands, paid or not.
    pub async fn confirm_only(&self, session: &str) -> Reply {
        self.send(Method::POST, &format!("/checkout/{session}/confirm"), None)
            .await
    }
}

/// Active, in-stock products with at least `stock` of variant 1, and
/// whether they are shoes.
pub async fn buyable(t: &Api, stock: u64) -> Vec<(String, bool)> {
    let tree = t.ok("/categories/tree").await;
    let shoe_ids: Vec<String> = tree["roots"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["children"].as_array().unwrap().clone())
        .filter(|b| b["key"].as_str().unwrap().ends_with("-shoes"))
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    let page = t
        .ok("/products?limit=100&status=active&inStock=true&sort=price:asc")
        .await;
    page["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["masterVariant"]["availability"]["quantity"]
                .as_u64()
                .unwrap()
                >= stock
        })
        .map(|p| {
            let shoe = p["categoryIds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| shoe_ids.iter().any(|s| c == s.as_str()));
            (p["id"].as_str().unwrap().to_string(), shoe)
        })
        .collect()
}

async fn whole_journey(t: TestMesh) {
    journey(&t).await;
}

/// Browse, cart, discount, checkout, confirm, order history, cancel.
pub async fn journey(t: &Api) {
    let shopper = Shopper::new(t).await;
    let products = buyable(t, 3).await;
    let cart = shopper.cart().await;
    let first = shopper.add(&cart, &products[0].0, 1, 2).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let second = shopper.add(&cart, &products[1].0, 1, 1).await;
    assert_adds_up(&second.body);
    let merged = shopper.add(&cart, &products[0].0, 1, 1).await;
    assert_eq!(
        merged.body["lineItems"].as_array().unwrap().len(),
        2,
        "equal lines merge"
    );
    assert_eq!(merged.body["lineItems"][0]["quantity"], 3);
    assert_adds_up(&merged.body);

    let discounted = shopper
        .send(
            Method::PUT,
            &format!("/carts/{cart}"),
            Some(json!({"discountCode": "welcome10"})),
        )
        .await;
    assert_eq!(discounted.status, 200, "{}", discounted.body);
    assert_eq!(discounted.body["discountCodes"], json!(["WELCOME10"]));
    let subtotal = cents(&discounted.body["subtotal"]);
    assert_eq!(cents(&discounted.body["discountTotal"]), subtotal / 10);
    assert_adds_up(&discounted.body);

    let session = shopper.checkout(&cart).await;
    assert_eq!(session.status, 201, "{}", session.body);
    assert_eq!(session.body["status"], "OPEN");
    // The session ships by the market's cheapest method (AU: standard,
    // free from 100.00), its price on top of the cart's.
    let shipping = cents(&session.body["totals"]["shipping"]);
    let cheapest = &session.body["shippingOptions"][0];
    assert_eq!(session.body["shippingMethodId"], cheapest["id"]);
    assert_eq!(shipping, cents(&cheapest["price"]), "{}", session.body);
    let total = cents(&discounted.body["totalPrice"]) + shipping;
    assert_eq!(cents(&session.body["totalPrice"]), total);
    let id = session.body["id"].as_str().unwrap();
    let confirmed = shopper.confirm(id).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    assert_eq!(confirmed.body["status"], "CONFIRMED");
    let order_id = confirmed.body["orderId"].as_str().unwrap().to_string();
    let again = shopper.confirm(id).await;
    assert_eq!(
        (again.status.as_u16(), &again.body),
        (200, &confirmed.body),
        "a repeat returns the same result"
    );
    assert_eq!(
        shopper
            .send(Method::GET, &format!("/checkout/{id}"), None)
            .await
            .body["status"],
        "CONFIRMED"
    );

    let ordered = shopper
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await;
    assert_eq!(ordered.body["state"], "ORDERED");
    shopper
        .add(&cart, &products[2].0, 1, 1)
        .await
        .error(409, "CART_ORDERED");

    // Order history: v2 by default, v1 on request with deprecation headers.
    let v2 = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(v2.body["total"], 1);
    let order = &v2.body["results"][0];
    assert_eq!(order["id"], order_id.as_str());
    assert_eq!(order["status"], "CONFIRMED");
    assert_eq!(order["totals"]["total"], session.body["totalPrice"]);
    assert_eq!(order["totals"], session.body["totals"]);
    // GST in an AUD total (docs/markets.md, "Tax"): each line's 1/11 after
    // discounts, rounded half to even (an eleventh never ties), summed,
    // and the shipping's.
    let eleventh = |amount: i64| (amount + 5) / 11;
    let gst: i64 = order["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| eleventh(cents(&line["totalPrice"])))
        .sum();
    assert_eq!(cents(&order["totals"]["tax"]), gst + eleventh(shipping));
    assert_eq!(
        order["shippingMethod"]["id"],
        session.body["shippingMethodId"]
    );
    assert_eq!(cents(&order["shippingMethod"]["price"]), shipping);
    assert_eq!(cents(&order["shippingMethod"]["tax"]), eleventh(shipping));
    assert!(order["totalAmount"].is_null() && v2.header("deprecation").is_none());
    let v1 = shopper.send(Method::GET, "/orders/v1", None).await;
    assert_eq!(
        v1.body["results"][0]["totalAmount"],
        session.body["totalPrice"]
    );
    assert!(v1.body["results"][0]["totals"].is_null());
    assert_eq!(v1.header("deprecation"), Some("@1793491200"));
    assert!(
        v1.header("sunset").is_some() && v1.header("link").unwrap().contains("rel=\"deprecation\"")
    );
    assert_eq!(
        shopper.send(Method::GET, "/orders/v2", None).await.body,
        v2.body
    );
    assert_eq!(
        shopper
            .send(Method::GET, "/customers/me/orders/v1", None)
            .await
            .body,
        v1.body
    );
    shopper
        .send(Method::GET, "/customers/someone/orders", None)
        .await
        .error(403, "FORBIDDEN");
    shopper
        .send(Method::GET, "/orders/v3", None)
        .await
        .error(404, "UNSUPPORTED_VERSION");
    let one = shopper
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await;
    assert_eq!(one.body["orderNumber"], order["orderNumber"]);

    // Cancel, and cancel again.
    for _ in 0..2 {
        let cancelled = shopper
            .send(
                Method::PUT,
                &format!("/orders/{order_id}"),
                Some(json!({"status": "CANCELLED"})),
            )
            .await;
        assert_eq!(
            (cancelled.status.as_u16(), cancelled.body["status"].as_str()),
            (200, Some("CANCELLED"))
        );
    }
    let other = Shopper::new(t).await;
    other
        .send(Method::GET, &format!("/orders/{order_id}"), None)
        .await
        .error(404, "NOT_FOUND");
    other
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await
        .error(404, "NOT_FOUND");
    other
        .send(Method::POST, &format!("/checkout/{id}/confirm"), None)
        .await
        .error(404, "NOT_FOUND");
}
both_backends!(
    browse_cart_discount_checkout_confirm_orders_cancel,
    whole_journey
);

async fn concurrent_confirms(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let cart = shopper.cart().await;
    shopper.add(&cart, &products[0].0, 1, 1).await;
    let session = shopper.checkout(&cart).await;
    let id = session.body["id"].as_str().unwrap().to_string();
    let replies = futures::future::join_all((0..64).map(|_| shopper.confirm(&id))).await;
    for r in &replies {
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(
            r.body, replies[0].body,
            "every confirmation answers the same"
        );
    }
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 1, "exactly one order");
    assert_eq!(orders.body["results"][0]["id"], replies[0].body["orderId"]);
}
both_backends!(
    sixty_four_concurrent_confirms_make_one_order,
    concurrent_confirms
);

/// The whole journey (sign-up's unique address, sessions, carts, the
/// exactly-once confirm, orders) on a Redis Cluster of three primaries and
/// three replicas, where no command may span two hash slots.
#[tokio::test]
async fn the_journey_runs_on_a_redis_cluster() {
    whole_journey(spawn_mesh_on(Backend::Cluster, &[]).await).await;
}

/// The whole journey with every program talking TLS to Redis, trusting a
/// private CA.
#[tokio::test]
async fn the_journey_runs_on_redis_over_tls() {
    whole_journey(spawn_mesh_on(Backend::Tls, &[]).await).await;
}

#[tokio::test]
async fn concurrent_confirms_make_one_order_on_a_redis_cluster() {
    concurrent_confirms(spawn_mesh_on(Backend::Cluster, &[]).await).await;
}

async fn sessions_of_one_cart(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let cart = shopper.cart().await;
    shopper.add(&cart, &products[0].0, 1, 1).await;
    // Four tabs open a checkout at once: one of them ends the cart's open
    // session, the others are superseded (and all but the last of them
    // dropped).
    let opened = futures::future::join_all((0..4).map(|_| shopper.checkout(&cart))).await;
    let sessions: Vec<String> = opened
        .iter()
        .map(|s| s.body["id"].as_str().unwrap().to_string())
        .collect();
    // Two tabs (or four), eight clicks each, all at once.
    let confirms = sessions
        .iter()
        .flat_map(|id| (0..8).map(move |_| id.clone()))
        .map(|id| {
            let shopper = &shopper;
            async move {
                let reply = shopper.confirm(&id).await;
                (id, reply)
            }
        });
    let replies = futures::future::join_all(confirms).await;
    let won: Vec<_> = replies.iter().filter(|(_, r)| r.status == 200).collect();
    assert!(!won.is_empty(), "one session's confirmations succeed");
    let winner = &won[0].0;
    for (id, reply) in &replies {
        if id == winner {
            assert_eq!(reply.status, 200, "{}", reply.body);
            assert_eq!(
                reply.body, won[0].1.body,
                "the winner answers the same every time"
            );
        } else {
            // The session the current one replaced answers 409; one
            // replaced before that is no longer kept (404).
            let code = reply.body["code"].as_str().unwrap_or_default();
            assert!(
                matches!(
                    (reply.status.as_u16(), code),
                    (409, "CHECKOUT_SUPERSEDED") | (404, "NOT_FOUND")
                ),
                "{}",
                reply.body
            );
        }
    }
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 1, "one cart, one order");
    assert_eq!(orders.body["results"][0]["id"], won[0].1.body["orderId"]);
}
both_backends!(
    four_sessions_of_one_cart_confirmed_at_once_make_one_order,
    sessions_of_one_cart
);

async fn concurrent_adds(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 40).await;
    let cart = shopper.cart().await;
    let replies =
        futures::future::join_all((0..32).map(|_| shopper.add(&cart, &products[0].0, 1, 1))).await;
    assert!(replies.iter().all(|r| r.status == 200), "every add lands");
    let final_cart = shopper
        .send(Method::GET, &format!("/carts/{cart}"), None)
        .await
        .body;
    assert_eq!(final_cart["lineItems"].as_array().unwrap().len(), 1);
    assert_eq!(
        final_cart["lineItems"][0]["quantity"], 32,
        "the quantity is exactly the sum"
    );
    assert_eq!(final_cart["version"], 33);
    assert_adds_up(&final_cart);
}
both_backends!(thirty_two_concurrent_adds_sum_exactly, concurrent_adds);
