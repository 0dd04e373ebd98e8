//! Money at checkout: one OPEN session per cart, totals repriced when a
//! session opens and re-checked at confirm, never an order at a stale price.

use prost::Message;
use reqwest::Method;
use storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
use storefront_platform::topology;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    GetProductsRequest, PriceUpdate, Product, UpdateProductRequest, Variant,
};
use storefront_proto::common::v1::Money;

use crate::both_backends;
use crate::helpers::TestMesh;
use crate::journey::{Shopper, buyable};

/// Sets a variant's AUD price through the catalog's own API, as a
/// merchandiser's tool would.
async fn set_price(t: &TestMesh, product_id: &str, variant_id: u32, cents: i64) {
    let mut client = CatalogServiceClient::connect(format!("http://{}", t.mesh.catalog_addr))
        .await
        .unwrap();
    let update = UpdateProductRequest {
        product_id: product_id.to_string(),
        name: None,
        description: None,
        prices: vec![PriceUpdate {
            variant_id,
            price: Some(Money {
                currency_code: "AUD".into(),
                cent_amount: cents,
                fraction_digits: 2,
            }),
        }],
    };
    let request = t.grpc_as(DEV_GATEWAY_ACCOUNT, "catalog", update);
    client.update_product(request).await.expect("price update");
}

async fn price_changed_between_open_and_confirm(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 2).await;
    let product = &products[0].0;
    let cart = shopper.cart().await;
    shopper.add(&cart, product, 1, 2).await;
    let session = shopper.checkout(&cart).await;
    assert_eq!(session.status, 201, "{}", session.body);
    let opened_total = session.body["totalPrice"]["centAmount"].as_i64().unwrap();

    set_price(&t, product, 1, 12_345).await;
    let id = session.body["id"].as_str().unwrap();
    let refused = shopper.confirm(id).await;
    refused.error(409, "CART_REPRICED");
    assert_eq!(refused.field_error(), ("totalPrice", "CHANGED"));
    assert_eq!(refused.body["cart"]["totalPrice"]["centAmount"], 24_690);
    assert_ne!(opened_total, 24_690);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("246.90 AUD"),
        "{}",
        refused.body
    );
    let orders = shopper.send(Method::GET, "/orders", None).await;
    assert_eq!(orders.body["total"], 0, "no order at a stale price");

    // A new checkout shows the new price, and confirms at it.
    let again = shopper.checkout(&cart).await;
    assert_eq!(again.body["totalPrice"]["centAmount"], 24_690);
    let confirmed = shopper.confirm(again.body["id"].as_str().unwrap()).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order = shopper
        .send(
            Method::GET,
            &format!("/orders/{}", confirmed.body["orderId"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(order.body["totals"]["total"]["centAmount"], 24_690);
}
both_backends!(
    a_price_changed_after_checkout_opened_is_409_and_no_order,
    price_changed_between_open_and_confirm
);

async fn one_open_session(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let cart = shopper.cart().await;
    shopper.add(&cart, &products[0].0, 1, 1).await;
    let first = shopper.checkout(&cart).await;
    let second = shopper.checkout(&cart).await;
    let (first, second) = (
        first.body["id"].as_str().unwrap().to_string(),
        second.body["id"].as_str().unwrap().to_string(),
    );
    let old = shopper
        .send(Method::GET, &format!("/checkout/{first}"), None)
        .await;
    assert_eq!(
        old.body["status"], "EXPIRED",
        "a superseded session is over"
    );
    shopper
        .confirm(&first)
        .await
        .error(409, "CHECKOUT_SUPERSEDED");
    assert_eq!(shopper.confirm(&second).await.status, 200);
}
both_backends!(
    opening_a_checkout_supersedes_the_cart_s_open_one,
    one_open_session
);

/// However often a checkout is opened on a cart, the cart keeps two
/// session records: the current one and the one it replaced; older ones
/// are gone (404), so a script opening checkouts in a loop stores nothing.
async fn superseded_sessions_are_not_kept(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let products = buyable(&t, 1).await;
    let cart = shopper.cart().await;
    shopper.add(&cart, &products[0].0, 1, 1).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        let opened = shopper.checkout(&cart).await;
        ids.push(opened.body["id"].as_str().unwrap().to_string());
    }
    let status = |id: String| {
        let shopper = &shopper;
        async move {
            let reply = shopper
                .send(Method::GET, &format!("/checkout/{id}"), None)
                .await;
            (reply.status.as_u16(), reply.body["status"].clone())
        }
    };
    for old in &ids[..3] {
        assert_eq!(status(old.clone()).await.0, 404, "{old} dropped");
    }
    assert_eq!(status(ids[3].clone()).await, (200, "EXPIRED".into()));
    shopper
        .confirm(&ids[3])
        .await
        .error(409, "CHECKOUT_SUPERSEDED");
    assert_eq!(status(ids[4].clone()).await, (200, "OPEN".into()));
    assert_eq!(shopper.confirm(&ids[4]).await.status, 200);
}
both_backends!(
    a_cart_keeps_its_current_and_previous_session_only,
    superseded_sessions_are_not_kept
);

/// The products of `ids` as the cart asks the catalog for them.
async fn get_products(t: &TestMesh, ids: &[String], prices_only: bool) -> Vec<Product> {
    let mut client = CatalogServiceClient::connect(format!("http://{}", t.mesh.catalog_addr))
        .await
        .unwrap();
    let message = GetProductsRequest {
        product_ids: ids.to_vec(),
        currency_code: "AUD".into(),
        prices_only,
    };
    let request = t.grpc_as(topology::CART.dev_account, "catalog", message);
    client
        .get_products(request)
        .await
        .unwrap()
        .into_inner()
        .products
}

/// A checkout's refresh asks only for what it prices by: the same prices
/// and stock as the whole products, in the cart's currency, at a fraction
/// of the bytes.
async fn checkout_reads_prices_only(t: TestMesh) {
    let ids: Vec<String> = buyable(&t, 2).await.into_iter().map(|(id, _)| id).collect();
    let whole = get_products(&t, &ids, false).await;
    let lean = get_products(&t, &ids, true).await;
    assert_eq!(whole.len(), ids.len());
    assert_eq!(lean.len(), whole.len());
    for (lean, whole) in lean.iter().zip(&whole) {
        let variant = |v: &Variant| Variant {
            id: v.id,
            sku: v.sku.clone(),
            price: v.price.clone(),
            prices: (v.prices.iter())
                .filter(|p| p.currency_code == "AUD")
                .cloned()
                .collect(),
            availability: v.availability,
            ..Variant::default()
        };
        let expected = Product {
            meta: whole.meta.clone(),
            status: whole.status,
            price: whole.price.clone(),
            variants: whole.variants.iter().map(variant).collect(),
            ..Product::default()
        };
        assert_eq!(*lean, expected);
        assert!(lean.variants.iter().all(|v| !v.prices.is_empty()));
        assert!(whole.name.is_some() && lean.name.is_none());
        assert!(
            lean.encoded_len() * 3 < whole.encoded_len(),
            "{} bytes of {}",
            lean.encoded_len(),
            whole.encoded_len()
        );
    }
}

#[tokio::test]
async fn checkout_reads_prices_only_memory() {
    let mesh = crate::helpers::spawn_mesh_on(crate::helpers::Backend::Memory, &[]).await;
    checkout_reads_prices_only(mesh).await;
}
