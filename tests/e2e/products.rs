//! `/products` and its sub-resources against the generated demo catalog.

use std::collections::HashSet;

use serde_json::Value;

use crate::helpers::spawn_mesh;

fn ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

fn cents(p: &Value) -> i64 {
    p["price"]["centAmount"].as_i64().unwrap()
}

#[tokio::test]
async fn products_come_in_the_paged_envelope_with_contract_fields() {
    let t = spawn_mesh().await;
    let page = t.ok("/products").await;
    assert_eq!(
        (
            page["limit"].as_u64(),
            page["offset"].as_u64(),
            page["count"].as_u64()
        ),
        (Some(20), Some(0), Some(20))
    );
    assert!(page["total"].as_u64().unwrap() >= 1000);
    let p = &page["results"][0];
    for field in [
        "id",
        "version",
        "createdAt",
        "lastModifiedAt",
        "key",
        "name",
        "slug",
        "brand",
        "categoryIds",
        "status",
        "featured",
        "popularity",
        "inStock",
        "price",
        "masterVariant",
        "media",
    ] {
        assert!(!p[field].is_null(), "missing {field}: {p}");
    }
    assert!(p["variants"].is_null(), "listings carry no variants");
    assert_eq!(p["price"]["type"], "centPrecision");
    assert_eq!(p["price"]["currencyCode"], "AUD");
    assert_eq!(p["price"]["fractionDigits"], 2);
    assert!(p["price"]["centAmount"].is_i64());
    for ts in ["createdAt", "lastModifiedAt"] {
        let s = p[ts].as_str().unwrap();
        assert!(s.ends_with('Z') && s.len() == 20, "{s}");
    }
    assert!(p["name"]["en-AU"].is_string());
    assert_eq!(p["categoryIds"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn walking_every_page_sees_each_product_once() {
    let t = spawn_mesh().await;
    let total = t.ok("/products?limit=1").await["total"].as_u64().unwrap() as usize;
    for (limit, sort) in [
        (100, ""),
        (37, "sort=price:desc"),
        (50, "sort=brand:asc&sort=popularity:desc"),
    ] {
        let all = t.walk(sort, limit).await;
        let unique: HashSet<String> = ids(&all).into_iter().collect();
        assert_eq!(all.len(), total, "{sort}");
        assert_eq!(unique.len(), total, "{sort}");
    }
    let last = t
        .ok(&format!("/products?limit=30&offset={}", total - 10))
        .await;
    assert_eq!(last["count"], 10);
    let past = t.ok(&format!("/products?offset={}", total + 5)).await;
    assert_eq!(
        (past["count"].as_u64(), past["total"].as_u64()),
        (Some(0), Some(total as u64))
    );
    // The farthest offset the contract allows, filtered and sorted, is an
    // empty page (the catalog's cost estimate once overflowed on it; found
    // by the contract run).
    let far = t
        .ok(&format!(
            "/products?offset={}&status=inactive&sort=name:asc&sort=brand:desc",
            i64::MAX
        ))
        .await;
    assert_eq!(far["count"], 0, "{far}");
    assert_eq!(far["offset"], i64::MAX, "{far}");
}

/// Listings, search hits and suggestions are written straight from the
/// downstream's protobuf; product detail goes through the models. Both
/// must say the same of each product, in both currencies.
#[tokio::test]
async fn listed_products_are_their_detail_without_variants() {
    let t = spawn_mesh().await;
    let mut compared = 0;
    for currency in ["AUD", "NZD"] {
        let all = t.walk(&format!("currency={currency}"), 100).await;
        let search = t
            .ok(&format!("/search?query=shirt&limit=20&currency={currency}"))
            .await;
        let suggested = t
            .ok(&format!("/search/suggestions?query=sh&currency={currency}"))
            .await;
        let hits = search["results"].as_array().unwrap().iter();
        let sample = all
            .iter()
            .step_by(25)
            .chain(hits)
            .chain(suggested["products"].as_array().unwrap().iter());
        for listed in sample {
            let id = listed["id"].as_str().unwrap();
            let mut detail = t.ok(&format!("/products/{id}?currency={currency}")).await;
            assert!(detail["variants"].is_array());
            detail.as_object_mut().unwrap().remove("variants");
            assert_eq!(listed, &detail, "{id} in {currency}");
            compared += 1;
        }
    }
    assert!(compared > 80, "{compared}");
}

/// The sort key of a product for a field, comparable across products.
fn key(p: &Value, field: &str) -> (i64, String) {
    match field {
        "name" => (0, p["name"]["en-AU"].as_str().unwrap().to_string()),
        "price" => (cents(p), String::new()),
        "createdAt" | "brand" | "status" => (0, p[field].as_str().unwrap().to_string()),
        "popularity" => (p[field].as_i64().unwrap(), String::new()),
        "featured" | "inStock" => (i64::from(p[field].as_bool().unwrap()), String::new()),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn every_sort_field_orders_both_ways_with_id_tie_break() {
    let t = spawn_mesh().await;
    // Every field the vocabulary declares sortable.
    for field in storefront_domain::query::vocabulary::PRODUCTS.sort_fields {
        for dir in ["asc", "desc"] {
            let page = t
                .ok(&format!("/products?limit=100&sort={field}:{dir}"))
                .await;
            let items = page["results"].as_array().unwrap();
            for pair in items.windows(2) {
                let (a, b) = (key(&pair[0], field), key(&pair[1], field));
                let in_order = if dir == "asc" { a <= b } else { a >= b };
                assert!(in_order, "{field}:{dir}: {a:?} then {b:?}");
                if a == b {
                    assert!(
                        pair[0]["id"].as_str() < pair[1]["id"].as_str(),
                        "ties by id"
                    );
                }
            }
        }
    }
    // Several sorts apply in order.
    let page = t
        .ok("/products?limit=100&sort=brand:asc&sort=price:desc")
        .await;
    for pair in page["results"].as_array().unwrap().windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(a["brand"].as_str() <= b["brand"].as_str());
        if a["brand"] == b["brand"] {
            assert!(cents(a) >= cents(b));
        }
    }
}

#[tokio::test]
async fn explicit_filters_narrow_the_listing() {
    let t = spawn_mesh().await;
    let total = t.ok("/products?limit=1").await["total"].as_u64().unwrap();
    let check = |path: &'static str, pred: fn(&Value) -> bool| {
        let t = &t;
        async move {
            let all = t.walk(path, 100).await;
            assert!(!all.is_empty(), "{path} matched nothing");
            assert!((all.len() as u64) < total, "{path} filtered nothing");
            for p in &all {
                assert!(pred(p), "{path}: {p}");
            }
        }
    };
    check("status=inactive", |p| p["status"] == "inactive").await;
    check("status=discontinued", |p| p["status"] == "discontinued").await;
    check("inStock=false", |p| p["inStock"] == false).await;
    check("featured=true", |p| p["featured"] == true).await;
    check("brand=Aoraki", |p| p["brand"] == "Aoraki").await;
    check("minPrice=10000", |p| cents(p) >= 10000).await;
    check("maxPrice=5000", |p| cents(p) <= 5000).await;
    check("minPrice=5000&maxPrice=6000&inStock=true", |p| {
        (5000..=6000).contains(&cents(p)) && p["inStock"] == true
    })
    .await;
    check("currency=NZD&minPrice=20000", |p| {
        p["price"]["currencyCode"] == "NZD" && cents(p) >= 20000
    })
    .await;

    let tree = t.ok("/categories/tree").await;
    let women = tree["roots"][0]["id"].as_str().unwrap().to_string();
    let in_women = t.walk(&format!("category={women}"), 100).await;
    assert!(!in_women.is_empty());
    assert!(in_women.iter().all(|p| {
        p["categoryIds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == women.as_str())
    }));
}

#[tokio::test]
async fn structured_filter_operators_partition_the_catalog() {
    let t = spawn_mesh().await;
    let total = |path: String| {
        let t = &t;
        async move {
            t.ok(&path.replace('[', "%5B").replace(']', "%5D")).await["total"]
                .as_u64()
                .unwrap()
        }
    };
    let all = total("/products?limit=1".into()).await;
    for (a, b) in [("eq", "ne"), ("gt", "lte"), ("gte", "lt")] {
        let x = total(format!("/products?limit=1&filter[price[{a}]]=9995")).await;
        let y = total(format!("/products?limit=1&filter[price[{b}]]=9995")).await;
        assert_eq!(x + y, all, "{a}/{b}");
    }
    let eq = t.walk("filter%5Bprice%5D=9995", 100).await;
    assert!(eq.iter().all(|p| cents(p) == 9995));
    let recent = t
        .walk("filter%5BcreatedAt%5Bgte%5D%5D=2026-01-01", 100)
        .await;
    assert!(!recent.is_empty());
    assert!(
        recent
            .iter()
            .all(|p| p["createdAt"].as_str().unwrap() >= "2026-01-01T00:00:00Z")
    );
    let combined = t.walk("filter%5Bstatus%5D=active&filter%5Bpopularity%5Bgte%5D%5D=9000&filter%5BinStock%5D=true", 100).await;
    assert!(!combined.is_empty());
    assert!(combined.iter().all(|p| p["status"] == "active"
        && p["popularity"].as_i64().unwrap() >= 9000
        && p["inStock"] == true));
    let not_aoraki = total("/products?limit=1&filter[brand[ne]]=Aoraki".into()).await;
    let aoraki = total("/products?limit=1&brand=Aoraki".into()).await;
    assert_eq!(aoraki + not_aoraki, all);
}

#[tokio::test]
async fn product_detail_variants_and_media() {
    let t = spawn_mesh().await;
    let summary = &t.ok("/products?limit=1&sort=price:desc").await["results"][0];
    let id = summary["id"].as_str().unwrap();
    let detail = t.ok(&format!("/products/{id}")).await;
    assert_eq!(detail["id"], summary["id"]);
    let variants = detail["variants"].as_array().unwrap();
    assert!(!variants.is_empty());
    assert_eq!(variants[0], detail["masterVariant"]);
    for v in variants {
        assert!(v["sku"].is_string() && v["attributes"].is_object());
        assert!(
            v["availability"]["inStock"].is_boolean() && v["availability"]["quantity"].is_u64()
        );
        assert_eq!(v["price"]["type"], "centPrecision");
    }
    let listed = t.ok(&format!("/products/{id}/variants")).await;
    assert_eq!(listed["total"].as_u64(), Some(variants.len() as u64));
    assert_eq!(&listed["results"].as_array().unwrap()[..], &variants[..]);
    let one = t.ok(&format!("/products/{id}/variants/1")).await;
    assert_eq!(one, variants[0]);
    let nzd = t
        .ok(&format!("/products/{id}/variants/1?currency=NZD"))
        .await;
    assert_eq!(nzd["price"]["currencyCode"], "NZD");
    t.fetch(&format!("/products/{id}/variants/99"))
        .await
        .error(404, "NOT_FOUND");
    t.fetch(&format!("/products/{id}/variants/first"))
        .await
        .error(404, "NOT_FOUND");

    let media = t.ok(&format!("/products/{id}/media?limit=1")).await;
    assert_eq!(media["count"], 1);
    let m = &media["results"][0];
    // The demo's media are this mesh's own pictures (DEMO_MEDIA_BASE).
    let url = m["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{}/media/demo/", t.base)), "{url}");
    assert!(m["type"] == "image" || m["type"] == "video");
    if m["type"] == "image" {
        let picture = t.http.get(url).send().await.unwrap();
        assert_eq!(picture.status(), 200);
        assert_eq!(picture.headers()["content-type"], "image/svg+xml");
        assert!(picture.text().await.unwrap().starts_with("<svg"));
    }
    assert!(m["alt"]["en-AU"].is_string());

    for path in [
        "/products/nope",
        "/products/nope/variants",
        "/products/nope/media",
        "/products/nope/variants/1",
    ] {
        let reply = t.fetch(path).await;
        reply.error(404, "NOT_FOUND");
        assert_eq!(reply.body["type"], "not_found_error");
    }
}
