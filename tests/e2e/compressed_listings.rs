//! Listings sent through as the catalog holds them (each summary an LZ4
//! block against a dictionary named by its hash): the catalog's two
//! answers agree, the gateway's JSON is byte for byte the JSON of a gateway
//! that asks for them decompressed, and an import that replaces the
//! dictionary changes nothing a shopper sees but the catalog.

use prost::Message as _;
use prost::bytes::Bytes;
use reqwest::Method;
use storefront_domain::compact::{Dictionary, Records};
use storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    CompressedProduct, GetSummaryDictionaryRequest, ListProductsRequest, Product,
    SummaryDictionary, Variant,
};
use storefront_proto::common::v1::{ListQuery, Money, PageInfo, PageRequest, ResourceMeta};
use storefront_proto::encoded::{EncodedProduct, ListProductsResponse};
use tonic::transport::Channel;

use crate::catalog_changes::{MERCHANDISING, export_lines, import, internal};
use crate::fake::{Calls, Fake};
use crate::handlers;
use crate::helpers::{TestMesh, spawn_mesh, spawn_mesh_with};

/// A request to the catalog as the gateway makes it.
fn signed<T>(t: &TestMesh, message: T) -> tonic::Request<T> {
    let token = t.mesh.issuer.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap();
    let mut request = tonic::Request::new(message);
    let bearer = format!("Bearer {token}").parse().unwrap();
    request.metadata_mut().insert("authorization", bearer);
    request
}

async fn catalog(t: &TestMesh) -> CatalogServiceClient<Channel> {
    let url = format!("http://{}", t.mesh.catalog_addr);
    CatalogServiceClient::connect(url).await.unwrap()
}

async fn list(t: &TestMesh, compressed: bool) -> ListProductsResponse {
    let message = ListProductsRequest {
        query: Some(ListQuery {
            page: Some(PageRequest {
                limit: 7,
                offset: 30,
            }),
            ..Default::default()
        }),
        currency_code: "NZD".into(),
        compressed,
    };
    let reply = catalog(t).await.list_products(signed(t, message)).await;
    reply.expect("a listing").into_inner()
}

async fn dictionary(t: &TestMesh, id: u64) -> Result<SummaryDictionary, tonic::Status> {
    let asked = signed(t, GetSummaryDictionaryRequest { id });
    let reply = catalog(t).await.get_summary_dictionary(asked).await;
    reply.map(tonic::Response::into_inner)
}

/// The products of a compressed listing, decompressed and their tails
/// merged, as a client of the declared message would see them.
async fn decompressed(t: &TestMesh, reply: &ListProductsResponse) -> (u64, Vec<Product>) {
    let held = dictionary(t, reply.dictionary_id).await.expect("held");
    assert_eq!(held.id, reply.dictionary_id);
    let dictionary = Dictionary::new(held.bytes);
    assert_eq!(dictionary.id(), held.id, "an id is the bytes' hash");
    let products = reply
        .compressed
        .iter()
        .map(|c| {
            let body = dictionary.decompress(&c.lz4, c.length).unwrap();
            let mut product = Product::decode(body.as_slice()).unwrap();
            product.merge(c.tail.as_ref()).unwrap();
            product
        })
        .collect();
    (held.id, products)
}

/// The feed with its product lines in the opposite order: its first
/// product, what an import compresses against, is another.
async fn reversed_feed(t: &TestMesh) -> String {
    let mut lines = export_lines(t).await;
    let at: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(r#""type":"product""#))
        .collect();
    let products: Vec<String> = at.iter().map(|&i| lines[i].clone()).collect();
    for (&i, line) in at.iter().zip(products.into_iter().rev()) {
        lines[i] = line;
    }
    lines.join("\n")
}

#[tokio::test]
async fn the_catalog_sends_a_listing_as_it_holds_it() {
    let t = spawn_mesh().await;
    let plain = list(&t, false).await;
    let compressed = list(&t, true).await;
    assert_eq!(compressed.page, plain.page);
    assert_eq!(compressed.compressed.len(), 7);
    assert!(compressed.products.encoded.is_empty());
    assert!(plain.compressed.is_empty() && plain.dictionary_id == 0);
    let (before, products) = decompressed(&t, &compressed).await;
    assert_eq!(products, plain.products.clone().decoded().unwrap());
    assert_eq!(products[0].price.as_ref().unwrap().currency_code, "NZD");
    let other = dictionary(&t, before ^ 1).await.unwrap_err();
    assert_eq!(other.code(), tonic::Code::NotFound);

    // An import whose first product differs compresses against another
    // dictionary; the one before is no longer held.
    let applied = import(&t, reversed_feed(&t).await, false).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    let compressed = list(&t, true).await;
    let (after, products) = decompressed(&t, &compressed).await;
    assert_ne!(after, before);
    assert_eq!(products, list(&t, false).await.products.decoded().unwrap());
    let gone = dictionary(&t, before).await.unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
}

/// Every page asked three times: written, written again (then kept), and
/// from the JSON kept.
async fn pages(t: &TestMesh, changed_at: &str, gateways: &[String]) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for query in [
        "limit=5&sort=price:desc",
        "limit=20&offset=40&currency=NZD",
        "limit=3&localeProjection=de-DE",
        "limit=7&filter[price[gte]]=1000&sort=name",
        "limit=4&category=does-not-exist",
    ] {
        for _ in 0..3 {
            let reply = t.get(&format!("/products?{query}")).send().await.unwrap();
            assert_eq!(reply.status(), 200, "{query}");
            // The demo's pictures are served by a mesh's own gateway (the
            // feed imported names the first's), and each mesh stamps a
            // change with its own clock.
            let mut text = reply.text().await.unwrap().replace(changed_at, "changed");
            for gateway in gateways {
                text = text.replace(gateway, "gateway");
            }
            out.push((query, text));
        }
    }
    out
}

#[tokio::test]
async fn compressed_listings_read_as_decompressed_ones() {
    let (held, plain) = tokio::join!(
        spawn_mesh(),
        spawn_mesh_with(&[("PRODUCT_JSON_CACHE_MB", "0")])
    );
    let gateways = [&held, &plain].map(|t| t.mesh.gateway_addr.to_string());
    let unchanged = "no change yet";
    let first = pages(&held, unchanged, &gateways).await;
    same(&first, &pages(&plain, unchanged, &gateways).await);

    // A new dictionary (the gateway fetches it), and a product changed.
    let feed = reversed_feed(&held).await;
    let mut stamps = Vec::new();
    for t in [&held, &plain] {
        let applied = import(t, feed.clone(), false).await;
        assert_eq!(applied.status, 200, "{}", applied.body);
        let id = first_product_id(t).await;
        let path = "/internal/catalog/stock";
        let sku = t.ok(&format!("/products/{id}")).await["masterVariant"]["sku"].clone();
        let body = serde_json::json!({ "changes": [{ "sku": sku, "quantity": 0 }] });
        let request = internal(t, MERCHANDISING, Method::POST, path).json(&body);
        let changed = t.send(request).await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        let stamp = &changed.body["products"][0]["lastModifiedAt"];
        stamps.push(format!("\"{}\"", stamp.as_str().expect("a stamp")));
    }
    let second = pages(&held, &stamps[0], &gateways).await;
    same(&second, &pages(&plain, &stamps[1], &gateways).await);
    assert_ne!(first, second, "the import and the change show");
}

/// Each page's JSON the same bytes (where they part shown, not 10 KB).
fn same(held: &[(&str, String)], plain: &[(&str, String)]) {
    assert_eq!(held.len(), plain.len());
    for ((query, a), (_, b)) in held.iter().zip(plain) {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let around = |s: &str| {
            s.get(at.saturating_sub(80)..(at + 80).min(s.len()))
                .map(str::to_owned)
        };
        assert!(
            a == b,
            "{query} at byte {at}: {:?} / {:?}",
            around(a),
            around(b)
        );
    }
}

async fn first_product_id(t: &TestMesh) -> String {
    let page = t.ok("/products?limit=1&sort=price:desc").await;
    page["results"][0]["id"].as_str().unwrap().to_string()
}

/// One product, encoded, and compressed against a dictionary of its own.
fn product_both_ways() -> (EncodedProduct, CompressedProduct, Dictionary) {
    let money = Money {
        currency_code: "AUD".into(),
        cent_amount: 4995,
        fraction_digits: 2,
    };
    let product = Product {
        meta: Some(ResourceMeta {
            id: "p-1".into(),
            ..Default::default()
        }),
        key: "zanzibar-lamp".into(),
        brand: "Lumen".into(),
        price: Some(money.clone()),
        master_variant: Some(Variant {
            id: 1,
            sku: "ZL-1".into(),
            price: Some(money),
            ..Default::default()
        }),
        ..Default::default()
    };
    let body = product.encode_to_vec();
    let dictionary = Dictionary::new(body.clone());
    let mut records = Records::new(dictionary.clone());
    records.push(&body, &mut Vec::new());
    let (lz4, length) = records.compressed(0).unwrap();
    let compressed = CompressedProduct {
        lz4: Bytes::copy_from_slice(lz4),
        length,
        tail: Bytes::new(),
    };
    let encoded = EncodedProduct {
        body: body.into(),
        tail: Vec::new(),
    };
    (encoded, compressed, dictionary)
}

/// A fake catalog whose compressed listings name its dictionary at offset
/// 0 and one it no longer holds at offset 1.
fn catalog_fake() -> (
    Fake,
    Calls<ListProductsRequest>,
    Calls<GetSummaryDictionaryRequest>,
) {
    let (encoded, compressed, dictionary) = product_both_ways();
    let id = dictionary.id();
    let (fake, listings) = Fake::default().answer(
        "/storefront.catalog.v1.CatalogService/ListProducts",
        move |asked: &ListProductsRequest| {
            let offset = asked
                .query
                .as_ref()
                .and_then(|q| q.page)
                .unwrap_or_default()
                .offset;
            let mut reply = ListProductsResponse {
                page: Some(PageInfo {
                    limit: 1,
                    offset,
                    count: 1,
                    total: 2,
                }),
                ..Default::default()
            };
            if asked.compressed {
                reply.dictionary_id = if offset == 0 { id } else { id ^ 1 };
                reply.compressed = vec![compressed.clone()];
            } else {
                reply.products.encoded = vec![encoded.clone()];
            }
            Ok(reply)
        },
    );
    let (fake, fetches) = fake.answer(
        "/storefront.catalog.v1.CatalogService/GetSummaryDictionary",
        move |asked: &GetSummaryDictionaryRequest| match asked.id == id {
            true => Ok(SummaryDictionary {
                id,
                bytes: dictionary.bytes().clone(),
            }),
            false => Err(tonic::Status::not_found("not held")),
        },
    );
    (fake, listings, fetches)
}

#[tokio::test]
async fn the_gateway_fetches_a_dictionary_once_and_asks_again_without_one() {
    let issuer = handlers::issuer().await;
    let (fake, listings, fetches) = catalog_fake();
    let catalog = fake.serve().await;
    let (base, stop) = handlers::gateway_with(&issuer.url, &[("CATALOG_URL", &catalog)]).await;
    let get = |query: &str| {
        handlers::send(handlers::request(
            Method::GET,
            format!("{base}/products?{query}"),
        ))
    };
    let mut results = Vec::new();
    for _ in 0..3 {
        let reply = get("limit=1").await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        results.push(reply.body["results"].clone());
    }
    assert_eq!(results[0][0]["key"], "zanzibar-lamp");
    assert!(listings.all().iter().all(|asked| asked.compressed));
    assert_eq!(fetches.one().id, product_both_ways().2.id(), "fetched once");

    // Named a dictionary the catalog no longer holds: asked again, whole.
    let reply = get("limit=1&offset=1").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["results"], results[0]);
    let asked: Vec<bool> = listings.all().iter().map(|a| a.compressed).collect();
    assert_eq!(asked, [true, true, true, true, false]);
    assert_eq!(fetches.all().len(), 2);
    stop.cancel();

    // A gateway that keeps no products' JSON asks for them decompressed.
    let (fake, listings, _) = catalog_fake();
    let catalog = fake.serve().await;
    let env = [
        ("CATALOG_URL", catalog.as_str()),
        ("PRODUCT_JSON_CACHE_MB", "0"),
    ];
    let (base, stop) = handlers::gateway_with(&issuer.url, &env).await;
    let url = format!("{base}/products?limit=1");
    let reply = handlers::send(handlers::request(Method::GET, url)).await;
    assert_eq!(reply.body["results"], results[0]);
    assert!(!listings.one().compressed);
    stop.cancel();
}
