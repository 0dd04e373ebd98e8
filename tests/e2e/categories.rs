//! Categories, the navigation tree and collections.

use crate::helpers::spawn_mesh;

#[tokio::test]
async fn categories_sort_by_name_and_position() {
    let t = spawn_mesh().await;
    let page = t.ok("/categories?limit=100").await;
    assert_eq!(page["total"], 52);
    for dir in ["asc", "desc"] {
        let page = t
            .ok(&format!("/categories?limit=100&sort=name:{dir}"))
            .await;
        let names: Vec<&str> = page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"]["en-AU"].as_str().unwrap())
            .collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        if dir == "desc" {
            sorted.reverse();
        }
        assert_eq!(names, sorted);
        let page = t
            .ok(&format!("/categories?limit=100&sort=position:{dir}"))
            .await;
        let positions: Vec<u64> = page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["position"].as_u64().unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| if dir == "asc" {
            w[0] <= w[1]
        } else {
            w[0] >= w[1]
        }));
    }
    let first = t.ok("/categories?limit=10&offset=0&sort=name:asc").await;
    let second = t.ok("/categories?limit=10&offset=10&sort=name:asc").await;
    assert_ne!(first["results"][9]["id"], second["results"][0]["id"]);
}

#[tokio::test]
async fn the_tree_has_three_levels_and_categories_know_their_ancestors() {
    let t = spawn_mesh().await;
    let tree = t.ok("/categories/tree").await;
    let roots = tree["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 4);
    for root in roots {
        for branch in root["children"].as_array().unwrap() {
            let leaves = branch["children"].as_array().unwrap();
            assert_eq!(leaves.len(), 3);
            assert!(
                leaves
                    .iter()
                    .all(|l| l["children"].as_array().unwrap().is_empty())
            );
        }
    }
    let leaf = &roots[1]["children"][0]["children"][2];
    let category = t
        .ok(&format!("/categories/{}", leaf["id"].as_str().unwrap()))
        .await;
    assert_eq!(category["key"], leaf["key"]);
    assert_eq!(category["parentId"], roots[1]["children"][0]["id"]);
    let ancestors = category["ancestors"].as_array().unwrap();
    assert_eq!(ancestors[0]["id"], roots[1]["id"]);
    assert_eq!(ancestors.len(), 2);
    let root = t
        .ok(&format!("/categories/{}", roots[0]["id"].as_str().unwrap()))
        .await;
    assert!(root["parentId"].is_null());
    t.fetch("/categories/unknown").await.error(404, "NOT_FOUND");
}

#[tokio::test]
async fn collections_list_and_resolve_to_products() {
    let t = spawn_mesh().await;
    let page = t.ok("/collections").await;
    assert!(page["total"].as_u64().unwrap() >= 5);
    let collection = &page["results"][0];
    let id = collection["id"].as_str().unwrap();
    let detail = t.ok(&format!("/collections/{id}")).await;
    assert_eq!(&detail, collection);
    let product_id = detail["productIds"][0].as_str().unwrap();
    t.ok(&format!("/products/{product_id}")).await;
    let by_name = t.ok("/collections?sort=name:desc&limit=100").await;
    let names: Vec<&str> = by_name["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"]["en-AU"].as_str().unwrap())
        .collect();
    assert!(names.windows(2).all(|w| w[0] >= w[1]));
    t.fetch("/collections/unknown")
        .await
        .error(404, "NOT_FOUND");
}

fn category(id: &str, parent: &str) -> String {
    format!(
        r#"{{"type":"category","id":"{id}","key":"k-{id}","name":{{"en-AU":"C {id}"}},"parentId":"{parent}"}}"#
    )
}

/// A feed of `records`, with the header an import needs.
fn feed(records: Vec<String>) -> String {
    let header = format!(
        r#"{{"type":"header","version":1,"records":{}}}"#,
        records.len()
    );
    std::iter::once(header)
        .chain(records)
        .collect::<Vec<_>>()
        .join("\n")
}

fn chain(n: usize) -> String {
    feed(
        (0..n)
            .map(|i| {
                let parent = if i == 0 {
                    String::new()
                } else {
                    format!("d{}", i - 1)
                };
                category(&format!("d{i}"), &parent)
            })
            .collect(),
    )
}

/// Issue 44 item 3 through the import route: too deep, too wide and
/// cyclic feeds are refused on their line, the catalog unchanged; one at
/// the depth limit is served as a tree.
#[tokio::test]
async fn category_feeds_are_bounded_and_the_tree_stays_servable() {
    use crate::catalog_changes::import;
    let t = spawn_mesh().await;
    let deep = import(&t, chain(13), true).await;
    deep.error(422, "INVALID_FEED");
    assert_eq!(deep.field_error().0, "lines[14].parentId", "{}", deep.body);
    let wide: Vec<String> = (0..100_000)
        .map(|i| category(&format!("w{i}"), ""))
        .collect();
    let refused = import(&t, feed(wide), true).await;
    refused.error(422, "INVALID_FEED");
    assert!(
        refused.body.to_string().contains("navigation tree"),
        "{}",
        refused.body
    );
    let cyclic = feed(vec![category("a", "b"), category("b", "a")]);
    import(&t, cyclic, true).await.error(422, "INVALID_FEED");
    // Cut short: refused whole; without a count at all, refused too.
    let whole = chain(5);
    let cut: Vec<&str> = whole.lines().take(4).collect();
    let refused = import(&t, cut.join("\n"), false).await;
    refused.error(422, "INVALID_FEED");
    assert_eq!(
        refused.field_error().0,
        "lines[1].records",
        "{}",
        refused.body
    );
    let bare = category("x", "");
    import(&t, bare, false).await.error(422, "INVALID_FEED");
    assert_eq!(t.ok("/categories?limit=1").await["total"], 52, "unchanged");

    // The tree is held by the gateway: read just before the import, it
    // must still be the new one just after (the import forgets it).
    let held = t.ok("/categories/tree").await;
    assert_ne!(held["roots"].as_array().map(Vec::len), Some(1), "{held}");
    let applied = import(&t, chain(12), false).await;
    assert_eq!(applied.status, 200, "{}", applied.body);
    let tree = t.ok("/categories/tree").await;
    let mut node = &tree["roots"][0];
    let mut depth = 1;
    while let Some(child) = node["children"].get(0) {
        node = child;
        depth += 1;
    }
    assert_eq!(depth, 12);
    assert!(node.get("ancestors").is_none());
}
