//! Search through the gateway: stemming, synonyms, typos, facets that agree
//! with filtered searches, paging, suggestions, hostile input, locales, and
//! the index following catalog changes.

use std::collections::{BTreeMap, HashSet};

use reqwest::Method;
use serde_json::Value;
use storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
use storefront_proto::catalog::v1::UpdateProductRequest;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::common::v1::LocalizedString;

use crate::helpers::{Backend, TestMesh, spawn_mesh, spawn_mesh_on, spawn_mesh_with};

fn q(text: &str) -> String {
    let mut s = String::new();
    for b in text.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' => s.push(b as char),
            _ => s.push_str(&format!("%{b:02X}")),
        }
    }
    s
}

async fn search(t: &TestMesh, text: &str, extra: &str) -> Value {
    t.ok(&format!("/search?query={}&{extra}", q(text))).await
}

fn names(page: &Value) -> Vec<String> {
    page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"]["en-AU"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn stems_synonyms_and_typos_find_the_products() {
    let t = spawn_mesh().await;
    for (text, expect) in [
        ("shirts", "Shirt"),
        ("tee", "T-Shirt"),
        ("shrit", "Shirt"),
        ("sneakres", "Sneaker"),
        ("T-SHIRT", "T-Shirt"),
    ] {
        let page = search(&t, text, "limit=10").await;
        assert!(page["total"].as_u64().unwrap() > 0, "{text} found nothing");
        let found = names(&page);
        assert!(
            found.iter().take(5).all(|n| n.contains(expect)),
            "{text}: {found:?}"
        );
    }
    // Words found as typed are not also fuzzed: "shirt" is one typo from
    // "short", yet finds no shorts, while "shrit" (found nowhere) does
    // match within a typo.
    let exact = names(&search(&t, "shirt", "sort=price:asc&limit=100").await);
    assert!(!exact.is_empty());
    assert!(exact.iter().all(|n| !n.contains("Short")), "{exact:?}");
    // A word some product has is taken as meant even when it finds
    // nothing: "shirt" among the shorts finds no shorts one typo away,
    // while "shrot" (which no product has) finds them there.
    let shorts = search(&t, "short", "limit=1").await;
    let category = shorts["facets"]["category"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["label"].as_str().unwrap().ends_with("-shorts"))
        .expect("a shorts category")["value"]
        .as_str()
        .unwrap()
        .to_string();
    let among = format!("limit=5&category={}", q(&category));
    assert_eq!(search(&t, "shirt", &among).await["total"], 0);
    let typo = search(&t, "shrot", &among).await;
    assert!(typo["total"].as_u64().unwrap() > 0);
    assert!(names(&typo).iter().all(|n| n.contains("Short")));
    let german = search(&t, "Hemd", "locale=de-DE&limit=5").await;
    assert!(german["total"].as_u64().unwrap() > 0);
    assert!(
        german["results"][0]["name"]["de-DE"]
            .as_str()
            .unwrap()
            .contains("Hemd")
    );
    // English fields have no Hemd: what an English search finds is a
    // word one typo away (four letters are forgiven one), never the
    // German shirts.
    let english = search(&t, "Hemd", "locale=en-AU&limit=50").await;
    assert!(
        names(&english).iter().all(|n| !n.contains("Shirt")),
        "{english}"
    );
    let by_price = search(&t, "shirt", "sort=price:asc&limit=50").await;
    let prices: Vec<i64> = by_price["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["price"]["centAmount"].as_i64().unwrap())
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]));
}

/// A search answers the same on its request's task (the demo catalog's
/// searches are all narrow enough) and on the blocking pool (every one,
/// with `SEARCH_INLINE_POSTINGS=0`): words, typos, dropped words, a miss,
/// filters and sorts.
#[tokio::test]
async fn searches_answer_alike_inline_and_on_the_blocking_pool() {
    // One place for both catalogs' pictures: each mesh would name its own.
    let media = (
        "DEMO_MEDIA_BASE",
        "https://images.storefront.example/products",
    );
    let inline = spawn_mesh_with(&[media]).await;
    let pooled = spawn_mesh_with(&[("SEARCH_INLINE_POSTINGS", "0"), media]).await;
    for (text, extra) in [
        ("shirt", "limit=20"),
        ("linen shirt", "limit=5&offset=3"),
        ("shrit", "limit=10"),
        ("linen shirt unicorn", "limit=5"),
        ("zzzzqx", "limit=5"),
        ("wool", "limit=10&sort=price:asc&inStock=true"),
    ] {
        let a = search(&inline, text, extra).await;
        let b = search(&pooled, text, extra).await;
        assert_eq!(a, b, "{text} {extra}");
    }
    assert!(
        search(&inline, "shirt", "limit=1").await["total"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[tokio::test]
async fn facets_agree_with_filtered_searches() {
    let t = spawn_mesh().await;
    let page = search(&t, "shirt", "limit=1").await;
    let total = page["total"].as_u64().unwrap();
    let facets = &page["facets"];
    let brands = facets["brand"].as_array().unwrap();
    assert_eq!(
        brands
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .sum::<u64>(),
        total
    );
    for b in brands {
        let filtered = search(
            &t,
            "shirt",
            &format!("limit=1&brand={}", q(b["value"].as_str().unwrap())),
        )
        .await;
        assert_eq!(filtered["total"], b["count"], "brand {}", b["value"]);
    }
    for s in facets["inStock"].as_array().unwrap() {
        let filtered = search(&t, "shirt", &format!("limit=1&inStock={}", s["value"])).await;
        assert_eq!(filtered["total"], s["count"]);
    }
    assert_eq!(
        facets["price"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["count"].as_u64().unwrap())
            .sum::<u64>(),
        total
    );
    for p in facets["price"].as_array().unwrap() {
        let mut range = format!("limit=1&minPrice={}", p["from"]);
        if let Some(to) = p["to"].as_i64() {
            range.push_str(&format!("&maxPrice={}", to - 1));
        }
        assert_eq!(
            search(&t, "shirt", &range).await["total"],
            p["count"],
            "{p}"
        );
    }
    let category = &facets["category"][0];
    assert!(category["label"].is_string());
    let filtered = search(
        &t,
        "shirt",
        &format!("limit=1&category={}", category["value"].as_str().unwrap()),
    )
    .await;
    assert_eq!(filtered["total"], category["count"]);
    // Facets count after the filters: a filtered search's facets shrink with it.
    let narrowed = search(&t, "shirt", "limit=1&inStock=true").await;
    let counts: BTreeMap<String, u64> = narrowed["facets"]["inStock"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["value"].to_string(), s["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts.get("false"), None);
}

#[tokio::test]
async fn paging_through_results_repeats_nothing() {
    let t = spawn_mesh().await;
    let total = search(&t, "classic", "limit=1").await["total"]
        .as_u64()
        .unwrap();
    assert!(total > 30);
    let mut seen = HashSet::new();
    let mut offset = 0;
    while offset < total {
        let page = search(&t, "classic", &format!("limit=13&offset={offset}")).await;
        for p in page["results"].as_array().unwrap() {
            assert!(
                seen.insert(p["id"].as_str().unwrap().to_string()),
                "duplicate across pages"
            );
        }
        offset += 13;
    }
    assert_eq!(seen.len() as u64, total);
}

#[tokio::test]
async fn suggestions_complete_the_word_being_typed() {
    let t = spawn_mesh().await;
    let s = t.ok("/search/suggestions?query=sne&limit=5").await;
    let completions: Vec<&str> = s["completions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(completions.contains(&"sneaker"), "{completions:?}");
    let products = s["products"].as_array().unwrap();
    assert!(!products.is_empty() && products.len() <= 5);
    assert!(
        products
            .iter()
            .all(|p| p["name"]["en-AU"].as_str().unwrap().contains("Sneaker"))
    );
    let two = t.ok("/search/suggestions?query=classic%20sh").await;
    assert!(
        two["completions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c.as_str().unwrap().starts_with("classic sh"))
    );
    assert!(
        two["products"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"]["en-AU"].as_str().unwrap().starts_with("Classic"))
    );
    t.fetch("/search/suggestions?query=sh&limit=0")
        .await
        .error(400, "INVALID_QUERY_PARAMETER");
    t.fetch("/search/suggestions")
        .await
        .error(400, "INVALID_QUERY_PARAMETER");
}

#[tokio::test]
async fn hostile_queries_never_break_the_search() {
    let t = spawn_mesh().await;
    for text in [
        "\"",
        ":",
        "(",
        ")",
        "AND",
        "shirt AND",
        "name:shirt",
        "shirt)",
        "*",
        "~2",
        "[a TO z]",
        "a\\b",
        "-",
        "+shirt",
        "💥",
        "ß",
        "'; DROP TABLE products; --",
        // One word as the document counts them (white space), many as the
        // analyser splits it: accepted, and cut to ten by the service
        // (found by the contract run, on suggestions).
        "a-b-c-d-e-f-g-h-i-j-k-l",
        "Õ¬ĬĿ¬¼𣝔🏻¿¶ďĩø=Û🏻Xkĩ±dę³=ė÷f",
    ] {
        let reply = t.fetch(&format!("/search?query={}", q(text))).await;
        assert_eq!(reply.status, 200, "{text:?}: {}", reply.body);
        let suggested = t
            .fetch(&format!("/search/suggestions?query={}", q(text)))
            .await;
        assert_eq!(suggested.status, 200, "{text:?}: {}", suggested.body);
        assert!(suggested.body["completions"].is_array());
        assert!(reply.body["results"].is_array());
    }
    let and = search(&t, "classic AND cotton", "limit=1").await;
    assert!(
        and["total"].as_u64().unwrap() > 0,
        "connectives are not required words"
    );
    for (path, field, code) in [
        ("/search".to_string(), "query", "REQUIRED"),
        ("/search?query=%20%20".to_string(), "query", "REQUIRED"),
        (
            format!("/search?query={}", "a".repeat(201)),
            "query",
            "OUT_OF_RANGE",
        ),
        (
            "/search?query=shirt%07".to_string(),
            "query",
            "INVALID_FORMAT",
        ),
        (
            "/search?query=shirt&locale=english".to_string(),
            "locale",
            "INVALID_FORMAT",
        ),
        (
            "/search?query=shirt&sort=colour".to_string(),
            "sort",
            "UNSUPPORTED",
        ),
    ] {
        let reply = t.fetch(&path).await;
        assert_eq!(reply.status, 400, "{path}");
        assert_eq!(reply.field_error(), (field, code), "{path}");
    }
}

async fn rename(t: &TestMesh, product_id: &str, name: &str) {
    let mut client = CatalogServiceClient::connect(format!("http://{}", t.mesh.catalog_addr))
        .await
        .unwrap();
    let update = UpdateProductRequest {
        product_id: product_id.to_string(),
        name: Some(LocalizedString {
            values: [
                ("en-AU".to_string(), name.to_string()),
                ("de-DE".to_string(), name.to_string()),
            ]
            .into(),
        }),
        description: None,
        prices: Vec::new(),
    };
    let request = t.grpc_as(DEV_GATEWAY_ACCOUNT, "catalog", update);
    client
        .update_product(request)
        .await
        .expect("catalog update");
}

#[tokio::test]
async fn the_index_follows_catalog_changes() {
    let t = spawn_mesh_on(Backend::Memory, &[]).await;
    let products = t.ok("/products?limit=2").await;
    let (first, second) = (
        products["results"][0]["id"].as_str().unwrap(),
        products["results"][1]["id"].as_str().unwrap(),
    );
    assert_eq!(search(&t, "zanzibar", "").await["total"], 0);

    // An explicit reindex on the internal port.
    rename(&t, first, "Zanzibar Lantern").await;
    let reindex = crate::reindex::reindex(&t).await;
    assert_eq!(reindex.status, 200, "{}", reindex.body);
    assert_eq!(reindex.body["documents"], 1000);
    let found = search(&t, "zanzibar", "").await;
    assert_eq!(
        (found["total"].as_u64(), found["results"][0]["id"].as_str()),
        (Some(1), Some(first))
    );
    let url = format!("http://{}/internal/search/reindex", t.mesh.internal_addr);
    t.send(t.http.request(Method::POST, &url))
        .await
        .error(401, "UNAUTHORIZED");

    // The index follows a change by itself, within the 2 s promised.
    rename(&t, second, "Zanzibar Teapot").await;
    let mut total = 0;
    for _ in 0..20 {
        total = search(&t, "zanzibar", "").await["total"].as_u64().unwrap();
        if total == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(total, 2, "search followed the second rename");
}

/// A query that matches nothing whole does without its last words and
/// says which; one that matches nothing even then is an empty 200 with a
/// close spelling when there is one, and without one when there is none.
#[tokio::test]
async fn no_match_drops_words_then_suggests_a_spelling() {
    let t = spawn_mesh().await;
    let dropped = search(&t, "linen shirt unicorn", "limit=5").await;
    assert_eq!(dropped["droppedWords"], serde_json::json!(["unicorn"]));
    assert!(dropped["total"].as_u64().unwrap() > 0);
    assert!(
        names(&dropped)
            .iter()
            .all(|n| n.contains("Linen") && n.contains("Shirt"))
    );
    let whole = search(&t, "linen shirt", "limit=5").await;
    assert!(whole.get("droppedWords").is_none() && whole.get("didYouMean").is_none());
    assert_eq!(whole["total"], dropped["total"]);
    // Four letters are forgiven one typo: `mugz` finds the mugs.
    let forgiven = search(&t, "mugz", "limit=5").await;
    assert!(forgiven["total"].as_u64().unwrap() > 0);
    assert!(names(&forgiven).iter().all(|n| n.contains("Mug")));
    // Three letters: none forgiven, so nothing matches; "mug" is close.
    let misspelt = search(&t, "mgu", "limit=5").await;
    assert_eq!(
        (misspelt["total"].as_u64(), misspelt["count"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(misspelt["didYouMean"], "mug");
    let suggested = search(&t, misspelt["didYouMean"].as_str().unwrap(), "limit=5").await;
    assert!(suggested["total"].as_u64().unwrap() > 0);
    let nothing = search(&t, "zzqxv", "limit=5").await;
    assert_eq!(nothing["total"], 0);
    assert!(nothing.get("didYouMean").is_none(), "{nothing}");
}
