//! `localeProjection` (issue 51, target 6): product, listing, search and
//! suggestion answers with one locale's strings, each localised field
//! still an object by locale: the locale's own, else its language's, else
//! en-AU, else any; a bad locale is 400 naming the parameter.

use serde_json::Value;

use crate::helpers::spawn_mesh;

fn keys(text: &Value) -> Vec<&str> {
    text.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[tokio::test]
async fn answers_carry_one_locale_s_strings_and_are_smaller() {
    let t = spawn_mesh().await;
    let every = t.fetch("/products?limit=20").await;
    let german = t.fetch("/products?limit=20&localeProjection=de-DE").await;
    assert_eq!(german.status, 200, "{}", german.body);
    let (all, one) = (&every.body["results"], &german.body["results"]);
    for (full, projected) in all.as_array().unwrap().iter().zip(one.as_array().unwrap()) {
        assert_eq!(full["id"], projected["id"], "the same products, in order");
        assert!(
            keys(&full["name"]).len() > 1,
            "the demo names in several locales"
        );
        assert_eq!(keys(&projected["name"]), ["de-DE"]);
        assert_eq!(projected["name"]["de-DE"], full["name"]["de-DE"]);
        assert_eq!(keys(&projected["slug"]), ["de-DE"]);
    }
    let size = |v: &Value| serde_json::to_vec(v).unwrap().len();
    assert!(size(&german.body) < size(&every.body), "smaller");

    // Swiss German: its language's; French: the default's.
    let id = all[0]["id"].as_str().unwrap();
    let swiss = t
        .ok(&format!("/products/{id}?localeProjection=de-CH"))
        .await;
    assert_eq!(keys(&swiss["name"]), ["de-DE"]);
    assert!(swiss["variants"].is_array(), "the detail form");
    let french = t
        .ok(&format!("/products/{id}?localeProjection=fr-FR"))
        .await;
    assert_eq!(keys(&french["name"]), ["en-AU"]);

    let found = t.ok("/search?query=shirt&localeProjection=de-DE").await;
    let hits = found["results"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|p| keys(&p["name"]) == ["de-DE"]));
    let suggested = t
        .ok("/search/suggestions?query=shi&localeProjection=en-US")
        .await;
    let products = suggested["products"].as_array().unwrap();
    assert!(products.iter().all(|p| keys(&p["name"]) == ["en-AU"]));

    let bad = t.fetch("/products?localeProjection=german").await;
    bad.error(400, "INVALID_QUERY_PARAMETER");
    assert_eq!(bad.field_error().0, "localeProjection");
}
