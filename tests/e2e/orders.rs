//! Order history queries, customer cancellation rules and the internal
//! fulfilment port.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{TestMesh, spawn_mesh};
use crate::journey::{Shopper, buyable};

const FULFILMENT: &str = "fulfilment@storefront.iam.gserviceaccount.com";

async fn place_order(shopper: &Shopper<'_>, product: &str, quantity: u64) -> String {
    let cart = shopper.cart().await;
    shopper.add(&cart, product, 1, quantity).await;
    let session = shopper.checkout(&cart).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    shopper.confirm(&session).await.body["orderId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn internal(
    t: &TestMesh,
    order: &str,
    token: Option<&str>,
    status: &str,
) -> reqwest::RequestBuilder {
    let mut request = t
        .http
        .put(format!(
            "http://{}/internal/orders/{order}/status",
            t.mesh.internal_addr
        ))
        .json(&json!({"status": status}));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request
}

#[tokio::test]
async fn order_history_sorts_and_filters() {
    let t = spawn_mesh().await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 3).await;
    let mut ids = Vec::new();
    for q in 1..=3 {
        ids.push(place_order(&shopper, &products[0].0, q).await);
    }
    let newest_first = shopper.send(Method::GET, "/orders", None).await.body;
    let listed: Vec<&str> = newest_first["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()],
        "default: newest first"
    );
    let by_total = shopper
        .send(Method::GET, "/orders?sort=totalAmount:asc", None)
        .await
        .body;
    let totals: Vec<i64> = by_total["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["totals"]["total"]["centAmount"].as_i64().unwrap())
        .collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]));
    shopper
        .send(
            Method::PUT,
            &format!("/orders/{}", ids[0]),
            Some(json!({"status": "CANCELLED"})),
        )
        .await;
    let cancelled = shopper
        .send(Method::GET, "/orders?filter%5Bstatus%5D=CANCELLED", None)
        .await
        .body;
    assert_eq!(
        (
            cancelled["total"].as_u64(),
            cancelled["results"][0]["id"].as_str()
        ),
        (Some(1), Some(ids[0].as_str()))
    );
    let dear = shopper
        .send(
            Method::GET,
            &format!("/orders?filter%5BtotalAmount%5Bgt%5D%5D={}", totals[0]),
            None,
        )
        .await
        .body;
    assert_eq!(dear["total"], 2);
    let today = shopper
        .send(
            Method::GET,
            "/orders?filter%5BcreatedAt%5Bgte%5D%5D=2000-01-01&limit=2",
            None,
        )
        .await
        .body;
    assert_eq!(
        (today["total"].as_u64(), today["count"].as_u64()),
        (Some(3), Some(2))
    );
    shopper
        .send(Method::GET, "/orders?sort=price", None)
        .await
        .error(400, "INVALID_SORT_FIELD");
    let bad = shopper
        .send(Method::GET, "/orders?filter%5Bstatus%5D=LOST", None)
        .await;
    bad.error(400, "INVALID_FILTER");
    assert_eq!(bad.field_error(), ("filter[status]", "INVALID_VALUE"));
}

#[tokio::test]
async fn fulfilment_moves_orders_and_customers_can_only_cancel_before_shipping() {
    let t = spawn_mesh().await;
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let order = place_order(&shopper, &products[0].0, 1).await;
    let path = format!("/orders/{order}");
    for (body, code) in [
        (json!({"status": "PROCESSING"}), "INVALID_VALUE"),
        (json!({"status": "LOST"}), "INVALID_VALUE"),
        (json!({}), "REQUIRED"),
    ] {
        let reply = shopper.send(Method::PUT, &path, Some(body)).await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(reply.field_error(), ("status", code));
    }

    let token = t.mesh.issuer.mint(FULFILMENT, "gateway-internal").unwrap();
    t.send(internal(&t, &order, None, "PROCESSING"))
        .await
        .error(401, "UNAUTHORIZED");
    let stranger = t
        .mesh
        .issuer
        .mint(
            "intruder@storefront.iam.gserviceaccount.com",
            "gateway-internal",
        )
        .unwrap();
    t.send(internal(&t, &order, Some(&stranger), "PROCESSING"))
        .await
        .error(403, "FORBIDDEN");
    let wrong_audience = t.mesh.issuer.mint(FULFILMENT, "catalog").unwrap();
    t.send(internal(&t, &order, Some(&wrong_audience), "PROCESSING"))
        .await
        .error(401, "INVALID_TOKEN");
    t.send(internal(&t, &order, Some(&token), "SHIPPED"))
        .await
        .error(409, "INVALID_STATE_TRANSITION");

    let processing = t
        .send(internal(&t, &order, Some(&token), "PROCESSING"))
        .await;
    assert_eq!(
        (
            processing.status.as_u16(),
            processing.body["status"].as_str()
        ),
        (200, Some("PROCESSING"))
    );
    let shipped = t.send(internal(&t, &order, Some(&token), "SHIPPED")).await;
    assert_eq!(shipped.body["status"], "SHIPPED");
    let repeat = t.send(internal(&t, &order, Some(&token), "SHIPPED")).await;
    assert_eq!(repeat.status, 200, "the same status again is a no-op");
    t.send(internal(&t, &order, Some(&token), "PROCESSING"))
        .await
        .error(409, "INVALID_STATE_TRANSITION");
    t.send(internal(&t, "no-such-order", Some(&token), "PROCESSING"))
        .await
        .error(404, "NOT_FOUND");

    let late = shopper
        .send(Method::PUT, &path, Some(json!({"status": "CANCELLED"})))
        .await;
    late.error(409, "INVALID_STATE_TRANSITION");
    assert_eq!(late.body["type"], "conflict_error");
    t.send(internal(&t, &order, Some(&token), "DELIVERED"))
        .await;
    shopper
        .send(Method::PUT, &path, Some(json!({"status": "CANCELLED"})))
        .await
        .error(409, "INVALID_STATE_TRANSITION");
    assert_eq!(
        shopper.send(Method::GET, &path, None).await.body["status"],
        "DELIVERED"
    );

    // The internal surface is not on the public port.
    let public = t
        .send(t.get(&format!("/internal/orders/{order}/status")))
        .await;
    public.error(404, "NOT_FOUND");
}

/// Every order change reaches the order stream once per consumer group,
/// with its type, a unique id and the order as it then was: created by
/// checkout, moved by fulfilment, and a second order cancelled.
async fn order_events_reach_the_back_office(t: TestMesh) {
    use prost::Message;
    use storefront_proto::orders::v1::{Order, OrderStatus};

    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let shipped = place_order(&shopper, &products[0].0, 1).await;
    let cancelled = place_order(&shopper, &products[0].0, 1).await;
    let token = t.mesh.issuer.mint(FULFILMENT, "gateway-internal").unwrap();
    let moved = t
        .send(internal(&t, &shipped, Some(&token), "PROCESSING"))
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let reply = shopper
        .send(
            Method::PUT,
            &format!("/orders/{cancelled}"),
            Some(json!({"status": "CANCELLED"})),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);

    let store = &t.mesh.store;
    let stream = storefront_orders::outbox::STREAM;
    let entries = store
        .stream_read_group(stream, "fulfilment", "test", 100)
        .await
        .unwrap();
    let text = |e: &storefront_platform::store::StreamEntry, f: &str| {
        String::from_utf8(e.field(f).unwrap().to_vec()).unwrap()
    };
    let seen: Vec<(String, String, String)> = entries
        .iter()
        .map(|e| (text(e, "orderId"), text(e, "type"), text(e, "status")))
        .collect();
    // Each order was paid (payment.authorized beside order.created); the
    // cancelled one's authorization was let go (payment.voided after it).
    let expected = [
        (shipped.clone(), "order.created", "CONFIRMED"),
        (shipped.clone(), "payment.authorized", "CONFIRMED"),
        (cancelled.clone(), "order.created", "CONFIRMED"),
        (cancelled.clone(), "payment.authorized", "CONFIRMED"),
        (shipped.clone(), "order.status_changed", "PROCESSING"),
        (cancelled.clone(), "order.cancelled", "CANCELLED"),
        (cancelled.clone(), "payment.voided", "CANCELLED"),
    ];
    let expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(o, k, s)| (o.clone(), k.to_string(), s.to_string()))
        .collect();
    assert_eq!(seen, expected);
    let ids: std::collections::HashSet<String> =
        entries.iter().map(|e| text(e, "eventId")).collect();
    assert_eq!(ids.len(), 7, "each event has its own id");
    let last = Order::decode(entries[6].field("order").unwrap()).unwrap();
    assert_eq!(last.status, OrderStatus::Cancelled as i32);
    assert_eq!(last.meta.unwrap().id, cancelled);
    assert!(entries.iter().all(|e| !text(e, "occurredAt").is_empty()));
    // Once per group: nothing more for this one, everything for another.
    assert!(
        store
            .stream_read_group(stream, "fulfilment", "test", 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .stream_read_group(stream, "analytics", "a", 100)
            .await
            .unwrap()
            .len(),
        7
    );
    reconciliation(&t, &token, &shipped, &cancelled).await;
}

/// `GET /internal/orders`: every customer's orders by last change, as
/// they are now, filtered by status, paged by cursor.
async fn reconciliation(t: &TestMesh, token: &str, shipped: &str, cancelled: &str) {
    let get = |query: &str| {
        t.http
            .get(format!(
                "http://{}/internal/orders?{query}",
                t.mesh.internal_addr
            ))
            .bearer_auth(token)
    };
    let all = t.send(get("limit=100")).await;
    assert_eq!(all.status, 200, "{}", all.body);
    let ids = |page: &serde_json::Value| -> Vec<(String, String)> {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["id"].as_str().unwrap().to_string(),
                    o["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let everything = ids(&all.body);
    assert_eq!(
        everything,
        [
            (shipped.to_string(), "PROCESSING".to_string()),
            (cancelled.to_string(), "CANCELLED".to_string())
        ],
        "oldest change first, as they are now"
    );
    assert_eq!(all.body["more"], false);
    let only = t.send(get("status=CANCELLED")).await;
    assert_eq!(
        ids(&only.body),
        [(cancelled.to_string(), "CANCELLED".to_string())]
    );
    // One at a time by cursor: the same orders, then nothing more.
    let (mut walked, mut cursor) = (Vec::new(), String::new());
    loop {
        let page = t.send(get(&format!("limit=1&cursor={cursor}"))).await;
        assert_eq!(page.status, 200, "{}", page.body);
        walked.extend(ids(&page.body));
        cursor = page.body["nextCursor"].as_str().unwrap().to_string();
        if page.body["more"] == false {
            break;
        }
        assert!(walked.len() <= 2, "the walk ends");
    }
    assert_eq!(walked, everything);
    let later = t.send(get(&format!("cursor={cursor}"))).await;
    assert!(ids(&later.body).is_empty(), "nothing newer yet");
    let future = t.send(get("updatedSince=2999-01-01")).await;
    assert!(ids(&future.body).is_empty());
    for (query, code) in [
        ("status=LOST", "INVALID_QUERY_PARAMETER"),
        ("limit=0", "INVALID_QUERY_PARAMETER"),
        ("updatedSince=yesterday", "INVALID_QUERY_PARAMETER"),
        ("cursor=not-a-cursor", "INVALID_CURSOR"),
    ] {
        t.send(get(query)).await.error(400, code);
    }
}
crate::both_backends!(
    order_events_are_published_once_per_group,
    order_events_reach_the_back_office
);

/// `CreateOrderBatch` over gRPC as the cart sends it: each order made and
/// answered as it would be alone (made, refused with its code, a repeat
/// answered with the order made before); the catalog may not call it.
async fn a_batch_of_orders_answers_each_as_alone(t: TestMesh) {
    use storefront_platform::topology::{CART, CATALOG};
    use storefront_proto::common::v1::LineItem;
    use storefront_proto::orders::v1::order_service_client::OrderServiceClient;
    use storefront_proto::orders::v1::{
        CreateOrderBatchRequest, CreateOrderRequest, GetOrderRequest,
    };
    let order = |id: &str, lines: u32| CreateOrderRequest {
        order_id: id.into(),
        customer_id: "c-batch".into(),
        line_items: (0..lines)
            .map(|_| LineItem {
                product_id: "p-1".into(),
                quantity: 1,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let orders = vec![
        order("o-batch-1", 1),
        order("o-batch-2", 0),
        order("o-batch-1", 1),
    ];
    let batch = CreateOrderBatchRequest { orders };
    let url = t.mesh.services["orders"].clone();
    let mut client = OrderServiceClient::connect(url).await.unwrap();
    let as_catalog = t.grpc_as(CATALOG.dev_account, "orders", batch.clone());
    let denied = client.create_order_batch(as_catalog).await.unwrap_err();
    assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    let as_cart = t.grpc_as(CART.dev_account, "orders", batch);
    let reply = client
        .create_order_batch(as_cart)
        .await
        .unwrap()
        .into_inner();
    let [made, refused, again] = reply.outcomes.try_into().unwrap();
    let made = made.order.expect("made");
    assert_eq!(made.meta.as_ref().unwrap().id, "o-batch-1");
    assert!(refused.order.is_none());
    let status = tonic::Status::from(refused.error.expect("refused"));
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    let details = storefront_proto::error::status_details(&status);
    assert_eq!(details.reason.as_deref(), Some("INVALID_ORDER"));
    assert_eq!(again.order.expect("the one made before"), made);
    let get = GetOrderRequest {
        customer_id: "c-batch".into(),
        order_id: "o-batch-1".into(),
    };
    let read = client
        .get_order(t.grpc_as(CART.dev_account, "orders", get.clone()))
        .await;
    assert_eq!(
        read.unwrap_err().code(),
        tonic::Code::PermissionDenied,
        "the cart only makes orders"
    );
    let gateway = storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
    let read = client.get_order(t.grpc_as(gateway, "orders", get)).await;
    assert_eq!(read.unwrap().into_inner(), made, "stored as made");
}
crate::both_backends!(order_batch_calls, a_batch_of_orders_answers_each_as_alone);
