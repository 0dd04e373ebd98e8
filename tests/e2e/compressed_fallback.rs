//! The gateway against a fake catalog whose listings come compressed: a
//! dictionary fetched once, a listing asked again decompressed when the
//! catalog no longer holds the dictionary it named, and nothing asked
//! compressed by a gateway that keeps no products' JSON.

use prost::Message as _;
use prost::bytes::Bytes;
use reqwest::Method;
use storefront_domain::compact::{Dictionary, Records};
use storefront_proto::catalog::v1::{
    CompressedProduct, GetSummaryDictionaryRequest, ListProductsRequest, Product,
    SummaryDictionary, Variant,
};
use storefront_proto::common::v1::{Money, PageInfo, ResourceMeta};
use storefront_proto::encoded::{EncodedProduct, ListProductsResponse, SearchResponse};
use storefront_proto::search::v1::SearchRequest;

use crate::fake::{Calls, Fake};
use crate::handlers;

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
    let asked = || -> Vec<bool> { listings.all().iter().map(|a| a.compressed).collect() };
    assert_eq!(asked(), [true, true, true, true, false]);
    assert_eq!(fetches.all().len(), 2);
    // For the next 2 s the catalog is asked decompressed at once (one
    // call a request while, say, an index rebuilds after an import); then
    // compressed again.
    assert_eq!(get("limit=1").await.body["results"], results[0]);
    assert_eq!(asked()[5..], [false]);
    tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
    assert_eq!(get("limit=1").await.body["results"], results[0]);
    assert_eq!(asked()[6..], [true]);
    assert_eq!(fetches.all().len(), 2, "the dictionary held");
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

/// Search hits come compressed too, against the catalog's dictionary; a
/// search that names one the catalog no longer holds (an index not yet
/// rebuilt after an import) is asked again decompressed.
#[tokio::test]
async fn searches_arrive_compressed_and_fall_back_alike() {
    let issuer = handlers::issuer().await;
    let (catalog, _, fetches) = catalog_fake();
    let catalog = catalog.serve().await;
    let (encoded, compressed, dictionary) = product_both_ways();
    let id = dictionary.id();
    let (search, searches) = Fake::default().answer(
        "/storefront.search.v1.SearchService/Search",
        move |asked: &SearchRequest| {
            let mut reply = SearchResponse {
                page: Some(PageInfo {
                    limit: 1,
                    offset: 0,
                    count: 1,
                    total: 1,
                }),
                ..Default::default()
            };
            if asked.compressed {
                // "stale": the index before an import.
                let stale = asked.text == "stale";
                reply.dictionary_id = if stale { id ^ 1 } else { id };
                reply.compressed = vec![compressed.clone()];
            } else {
                reply.products.encoded = vec![encoded.clone()];
            }
            Ok(reply)
        },
    );
    let search = search.serve().await;
    let env = [("CATALOG_URL", catalog.as_str()), ("SEARCH_URL", &search)];
    let (base, stop) = handlers::gateway_with(&issuer.url, &env).await;
    let get = |text: &str| {
        let url = format!("{base}/search?query={text}&limit=1");
        handlers::send(handlers::request(Method::GET, url))
    };
    let fresh = get("lamp").await;
    assert_eq!(fresh.status, 200, "{}", fresh.body);
    assert_eq!(fresh.body["results"][0]["key"], "zanzibar-lamp");
    let stale = get("stale").await;
    assert_eq!(stale.body["results"], fresh.body["results"]);
    let asked: Vec<(String, bool)> = (searches.all().into_iter())
        .map(|a| (a.text, a.compressed))
        .collect();
    let want = [("lamp", true), ("stale", true), ("stale", false)];
    assert_eq!(asked, want.map(|(t, c)| (t.to_string(), c)));
    assert_eq!(
        fetches.all().len(),
        2,
        "the catalog's, then the one it lacks"
    );
    stop.cancel();
}
