//! Listings sent through as the catalog holds them (each summary an LZ4
//! block against a dictionary named by its hash): the catalog's two
//! answers agree, the gateway's JSON is byte for byte the JSON of a gateway
//! that asks for them decompressed, and an import that replaces the
//! dictionary changes nothing a shopper sees but the catalog.

use prost::Message as _;
use reqwest::Method;
use storefront_domain::compact::Dictionary;
use storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    CompressedProduct, GetSummaryDictionaryRequest, ListProductsRequest, Product, SummaryDictionary,
};
use storefront_proto::common::v1::{ListQuery, PageRequest};
use storefront_proto::encoded::{ListProductsResponse, SearchResponse};
use storefront_proto::search::v1::SearchRequest;
use storefront_proto::search::v1::search_service_client::SearchServiceClient;
use tonic::transport::Channel;

use crate::catalog_changes::{MERCHANDISING, export_lines, import, internal};
use crate::helpers::{TestMesh, spawn_mesh, spawn_mesh_with};

/// A request to the catalog as the gateway makes it.
fn signed<T>(t: &TestMesh, message: T) -> tonic::Request<T> {
    signed_for(t, "catalog", message)
}

/// A request to `service` as the gateway makes it.
fn signed_for<T>(t: &TestMesh, service: &str, message: T) -> tonic::Request<T> {
    let token = t.mesh.issuer.mint(DEV_GATEWAY_ACCOUNT, service).unwrap();
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

async fn search(t: &TestMesh, compressed: bool) -> SearchResponse {
    let url = t.mesh.services["search"].clone();
    let mut client = SearchServiceClient::connect(url).await.unwrap();
    let message = SearchRequest {
        text: "classic".into(),
        locale: "en-AU".into(),
        currency_code: "NZD".into(),
        query: Some(ListQuery {
            page: Some(PageRequest {
                limit: 5,
                offset: 2,
            }),
            ..Default::default()
        }),
        compressed,
    };
    let reply = client.search(signed_for(t, "search", message)).await;
    reply.expect("a search").into_inner()
}

async fn dictionary(t: &TestMesh, id: u64) -> Result<SummaryDictionary, tonic::Status> {
    let asked = signed(t, GetSummaryDictionaryRequest { id });
    let reply = catalog(t).await.get_summary_dictionary(asked).await;
    reply.map(tonic::Response::into_inner)
}

/// The products of a compressed listing, decompressed and their tails
/// merged, as a client of the declared message would see them.
async fn decompressed(t: &TestMesh, reply: (&[CompressedProduct], u64)) -> (u64, Vec<Product>) {
    let (compressed, id) = reply;
    let held = dictionary(t, id).await.expect("held");
    assert_eq!(held.id, id);
    let dictionary = Dictionary::new(held.bytes);
    assert_eq!(dictionary.id(), held.id, "an id is the bytes' hash");
    let products = compressed
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
async fn the_catalog_and_search_send_products_as_they_hold_them() {
    let t = spawn_mesh().await;
    let plain = list(&t, false).await;
    let compressed = list(&t, true).await;
    assert_eq!(compressed.page, plain.page);
    assert_eq!(compressed.compressed.len(), 7);
    assert!(compressed.products.encoded.is_empty());
    assert!(plain.compressed.is_empty() && plain.dictionary_id == 0);
    let listed = (&compressed.compressed[..], compressed.dictionary_id);
    let (before, products) = decompressed(&t, listed).await;
    assert_eq!(products, plain.products.clone().decoded().unwrap());
    assert_eq!(products[0].price.as_ref().unwrap().currency_code, "NZD");

    // Search holds the catalog's summaries as exported: the same dictionary.
    let (plain, compressed) = (search(&t, false).await, search(&t, true).await);
    assert_eq!(
        (compressed.page, &compressed.facets),
        (plain.page, &plain.facets)
    );
    assert_eq!(compressed.compressed.len(), 5);
    let found = (&compressed.compressed[..], compressed.dictionary_id);
    let (id, products) = decompressed(&t, found).await;
    assert_eq!(id, before);
    assert_eq!(products, plain.products.decoded().unwrap());
    let other = dictionary(&t, before ^ 1).await.unwrap_err();
    assert_eq!(other.code(), tonic::Code::NotFound);

    // An import whose first product differs compresses against another
    // dictionary; the one before is no longer held.
    let applied = import(&t, reversed_feed(&t).await, false).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    let compressed = list(&t, true).await;
    let listed = (&compressed.compressed[..], compressed.dictionary_id);
    let (after, products) = decompressed(&t, listed).await;
    assert_ne!(after, before);
    assert_eq!(products, list(&t, false).await.products.decoded().unwrap());
    let gone = dictionary(&t, before).await.unwrap_err();
    assert_eq!(gone.code(), tonic::Code::NotFound);
}

/// Every page asked three times: written, written again (then kept), and
/// from the JSON kept.
const LISTINGS: [&str; 5] = [
    "/products?limit=5&sort=price:desc",
    "/products?limit=20&offset=40&currency=NZD",
    "/products?limit=3&localeProjection=de-DE",
    "/products?limit=7&filter[price[gte]]=1000&sort=name",
    "/products?limit=4&category=does-not-exist",
];

const SEARCHES: [&str; 4] = [
    "/search?query=classic&limit=5",
    "/search?query=lether&limit=3&currency=NZD",
    "/search?query=linen%20frame&sort=price:asc&limit=4&localeProjection=de-DE",
    "/search?query=zzzzqx",
];

async fn pages(
    t: &TestMesh,
    paths: &[String],
    changed_at: &str,
    gateways: &[String],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for query in paths {
        for _ in 0..3 {
            let reply = t.get(query).send().await.unwrap();
            assert_eq!(reply.status(), 200, "{query}");
            // The demo's pictures are served by a mesh's own gateway (the
            // feed imported names the first's), and each mesh stamps a
            // change with its own clock.
            let mut text = reply.text().await.unwrap().replace(changed_at, "changed");
            for gateway in gateways {
                text = text.replace(gateway, "gateway");
            }
            out.push((query.clone(), text));
        }
    }
    out
}

#[tokio::test]
async fn compressed_listings_read_as_decompressed_ones() {
    // Searches are asked until both follow their catalog: no budget.
    let unlimited = ("RATE_LIMIT_SEARCH", "off");
    let kept = [unlimited];
    let not_kept = [unlimited, ("PRODUCT_JSON_CACHE_MB", "0")];
    let (held, plain) = tokio::join!(spawn_mesh_with(&kept), spawn_mesh_with(&not_kept));
    let gateways = [&held, &plain].map(|t| t.mesh.gateway_addr.to_string());
    let unchanged = "no change yet";
    let listings = LISTINGS.map(String::from);
    let all: Vec<String> = LISTINGS
        .iter()
        .chain(&SEARCHES)
        .map(|&p| p.into())
        .collect();
    let first = pages(&held, &all, unchanged, &gateways).await;
    same(&first, &pages(&plain, &all, unchanged, &gateways).await);

    // A new dictionary (the gateway fetches it), and a product changed.
    let feed = reversed_feed(&held).await;
    let mut stamps = Vec::new();
    let mut searches: Vec<String> = SEARCHES.map(String::from).into();
    for t in [&held, &plain] {
        let applied = import(t, feed.clone(), false).await;
        assert_eq!(applied.status, 200, "{}", applied.body);
        let id = first_product_id(t).await;
        let path = "/internal/catalog/stock";
        let product = t.ok(&format!("/products/{id}")).await;
        let sku = product["masterVariant"]["sku"].clone();
        let key = product["key"].as_str().unwrap().replace('-', "%20");
        let found = format!("/search?query={key}&limit=3");
        if !searches.contains(&found) {
            searches.insert(0, found);
        }
        let body = serde_json::json!({ "changes": [{ "sku": sku, "quantity": 0 }] });
        let request = internal(t, MERCHANDISING, Method::POST, path).json(&body);
        let changed = t.send(request).await;
        assert_eq!(changed.status, 200, "{}", changed.body);
        let stamp = &changed.body["products"][0]["lastModifiedAt"];
        stamps.push(format!("\"{}\"", stamp.as_str().expect("a stamp")));
    }
    let second = pages(&held, &listings, &stamps[0], &gateways).await;
    same(
        &second,
        &pages(&plain, &listings, &stamps[1], &gateways).await,
    );
    assert_ne!(
        first[..second.len()],
        second,
        "the import and the change show"
    );
    // Each search follows its catalog within 2 s (a rebuild here: the
    // dictionary changed), the changed product found by its key's words;
    // then the two answer alike.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        a = pages(&held, &searches, &stamps[0], &gateways).await;
        b = pages(&plain, &searches, &stamps[1], &gateways).await;
        if a == b && a[0].1.contains(r#""lastModifiedAt":changed"#) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    same(&a, &b);
    assert!(a[0].1.contains(r#""lastModifiedAt":changed"#), "{}", a[0].1);
}

/// Each page's JSON the same bytes (where they part shown, not 10 KB).
fn same(held: &[(String, String)], plain: &[(String, String)]) {
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
