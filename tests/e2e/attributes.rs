//! `filter[attributes.<name>]` on listings and search (issue 51, target
//! 5): a product is kept when any of its variants has the attribute, the
//! master or another; eq and ne partition the catalog; an attribute no
//! product has keeps nothing.

use serde_json::Value;

use crate::helpers::{TestMesh, spawn_mesh};

fn encoded(path: &str) -> String {
    path.replace('[', "%5B").replace(']', "%5D")
}

async fn total(t: &TestMesh, path: &str) -> u64 {
    t.ok(&encoded(path)).await["total"].as_u64().unwrap()
}

/// The colours of a product's variants (its detail).
async fn colours(t: &TestMesh, id: &str) -> Vec<String> {
    let detail = t.ok(&format!("/products/{id}")).await;
    (detail["variants"].as_array().unwrap().iter())
        .filter_map(|v| v["attributes"]["colour"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn attribute_filters_keep_products_with_a_variant_that_has_it() {
    let t = spawn_mesh().await;
    let all = total(&t, "/products?limit=1").await;
    let navy = total(&t, "/products?limit=1&filter[attributes.colour]=Navy").await;
    let not_navy = total(&t, "/products?limit=1&filter[attributes.colour[ne]]=Navy").await;
    assert!(navy > 0 && not_navy > 0);
    assert_eq!(navy + not_navy, all);
    assert_eq!(
        total(&t, "/products?limit=1&filter[attributes.colour]=Mauve").await,
        0
    );
    assert_eq!(
        total(&t, "/products?limit=1&filter[attributes.flavour]=Navy").await,
        0
    );
    // Every product kept has a navy variant.
    let page = t
        .ok(&encoded(
            "/products?limit=20&filter[attributes.colour]=Navy",
        ))
        .await;
    for p in page["results"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        assert!(colours(&t, id).await.iter().any(|c| c == "Navy"), "{id}");
    }
    // A product whose navy variant is not its master is kept, by listings
    // and by search (whose index reads listing summaries, which have no
    // variants); one with no navy variant is not.
    let listed = t.ok("/products?limit=60").await;
    let (mut other, mut none): (Option<Value>, Option<Value>) = (None, None);
    for p in listed["results"].as_array().unwrap() {
        let found = colours(&t, p["id"].as_str().unwrap()).await;
        let master = p["masterVariant"]["attributes"]["colour"].as_str();
        if master != Some("Navy") && found.iter().any(|c| c == "Navy") {
            other.get_or_insert(p.clone());
        } else if !found.iter().any(|c| c == "Navy") {
            none.get_or_insert(p.clone());
        }
    }
    let (other, none) = (other.expect("a navy variant not the master"), none.unwrap());
    for (p, kept) in [(&other, 1), (&none, 0)] {
        let key = p["key"].as_str().unwrap();
        let filtered = format!("filter[key]={key}&filter[attributes.colour]=Navy");
        assert_eq!(
            total(&t, &format!("/products?{filtered}")).await,
            kept,
            "{key}"
        );
        let word = p["name"]["en-AU"]
            .as_str()
            .unwrap()
            .split(' ')
            .next_back()
            .unwrap();
        let search = format!("/search?query={word}&{filtered}");
        assert_eq!(total(&t, &search).await, kept, "search {key}");
    }
}

#[tokio::test]
async fn search_narrows_by_attributes_as_listings_do() {
    let t = spawn_mesh().await;
    let query = "/search?query=shirt&limit=1";
    let all = total(&t, query).await;
    let sand = total(&t, &format!("{query}&filter[attributes.colour]=Sand")).await;
    let not_sand = total(&t, &format!("{query}&filter[attributes.colour[ne]]=Sand")).await;
    assert!(sand > 0 && sand < all, "{sand} of {all}");
    assert_eq!(sand + not_sand, all);
    let both = "filter[attributes.colour]=Sand&filter[attributes.size]=M";
    let narrower = total(&t, &format!("{query}&{both}")).await;
    assert!(narrower > 0 && narrower < sand, "{narrower} of {sand}");
    let page = t
        .ok(&encoded(&format!("/search?query=shirt&limit=10&{both}")))
        .await;
    for p in page["results"].as_array().unwrap() {
        let detail = t
            .ok(&format!("/products/{}", p["id"].as_str().unwrap()))
            .await;
        let variants = detail["variants"].as_array().unwrap();
        let has = |k: &str, v: &str| variants.iter().any(|x| x["attributes"][k] == v);
        assert!(has("colour", "Sand") && has("size", "M"), "{}", p["id"]);
    }
    let refused = t
        .fetch(&encoded("/search?query=shirt&filter[attributes]=Sand"))
        .await;
    let body = refused.error(400, "INVALID_FILTER");
    assert_eq!(body["errors"][0]["field"], "filter[attributes]");
}

/// Search's attribute facets count what the attribute filters keep: for
/// every value of every name, its count is the total of the search
/// narrowed by it.
#[tokio::test]
async fn attribute_facets_count_what_their_filters_keep() {
    let t = spawn_mesh().await;
    let page = t.ok("/search?query=boots&limit=1").await;
    let facets = page["facets"]["attributes"].as_array().unwrap();
    let names: Vec<&str> = facets.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names.contains(&"colour") && names.contains(&"size"),
        "{names:?}"
    );
    for facet in facets {
        let name = facet["name"].as_str().unwrap();
        let values = facet["values"].as_array().unwrap();
        assert!(!values.is_empty(), "{name}");
        let counts: Vec<u64> = values
            .iter()
            .map(|v| v["count"].as_u64().unwrap())
            .collect();
        assert!(
            counts.windows(2).all(|w| w[0] >= w[1]),
            "{name}: {counts:?}"
        );
        for v in values {
            let value = v["value"].as_str().unwrap();
            let narrowed = format!("/search?query=boots&limit=1&filter[attributes.{name}]={value}");
            assert_eq!(total(&t, &narrowed).await, v["count"], "{name}={value}");
        }
    }
    // Narrowed, the facets are of what is left: one colour, all of it.
    let sand = t
        .ok(&encoded(
            "/search?query=boots&limit=1&filter[attributes.colour]=Sand",
        ))
        .await;
    let colour = (sand["facets"]["attributes"].as_array().unwrap().iter())
        .find(|f| f["name"] == "colour")
        .unwrap();
    let sand_count = colour["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"] == "Sand");
    assert_eq!(sand_count.unwrap()["count"], sand["total"]);
}

/// A product put on the internal port with a variant's attribute, then
/// put again with another value: listings follow at once, search within
/// 2 s (its index reads the catalog's summaries, which carry them).
#[tokio::test]
async fn a_changed_variant_attribute_is_filtered_by_at_once() {
    use crate::catalog_changes::{MERCHANDISING, internal};
    use serde_json::json;
    let t = spawn_mesh().await;
    let category = t.ok("/categories?limit=1").await["results"][0]["id"].clone();
    let lamp = |finish: &str| {
        json!({
            "key": "zanzibar-lamp", "name": {"en-AU": "Zanzibar Lamp"}, "brand": "Lumen",
            "categoryId": category,
            "variants": [
                {"id": 1, "sku": "ZL-1", "attributes": {"finish": "Matte"},
                 "prices": [{"currencyCode": "AUD", "centAmount": 5000}], "availability": {"quantity": 4}},
                {"id": 2, "sku": "ZL-2", "attributes": {"finish": finish},
                 "prices": [{"currencyCode": "AUD", "centAmount": 5000}], "availability": {"quantity": 4}}
            ]
        })
    };
    let finds = async |finish: &str, want: u64| {
        let listed = format!("/products?limit=1&filter[attributes.finish]={finish}");
        assert_eq!(total(&t, &listed).await, want, "listing {finish}");
        let searched = format!("/search?query=zanzibar&limit=1&filter[attributes.finish]={finish}");
        for _ in 0..20 {
            if total(&t, &searched).await == want {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("search for finish {finish} did not find {want} within 2 s");
    };
    for (finish, gone) in [("Brass", None), ("Copper", Some("Brass"))] {
        let path = "/internal/catalog/products/p-zanzibar";
        let put = internal(&t, MERCHANDISING, reqwest::Method::PUT, path).json(&lamp(finish));
        let reply = t.send(put).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        finds(finish, 1).await;
        finds("Matte", 1).await;
        if let Some(gone) = gone {
            finds(gone, 0).await;
        }
    }
}
