//! The shop's own catalog from a feed (`CATALOG_FEED`, `docs/feed.md`):
//! loaded at start from a file or streamed from a URL, served by listings,
//! detail, categories and search; a feed with problems stops the catalog
//! with every problem and its line.

use storefront::{Mesh, MeshOptions};
use storefront_platform::env::EnvReader;
use tokio::net::TcpListener;

use crate::helpers::{Backend, spawn_mesh_on};

/// A small shop's feed: one category, two products, one collection.
pub fn small_feed() -> String {
    [
        r#"{"type":"header","version":1}"#,
        r#"{"type":"category","id":"cat-mugs","key":"mugs","name":{"en-AU":"Mugs"}}"#,
        r#"{"type":"product","id":"p-mug","key":"blue-mug","name":{"en-AU":"Blue Stoneware Mug"},"brand":"Potter","categoryId":"cat-mugs","variants":[{"id":1,"sku":"MUG-BLUE","prices":[{"currencyCode":"AUD","centAmount":2495},{"currencyCode":"NZD","centAmount":2695}],"availability":{"quantity":7}}]}"#,
        r#"{"type":"product","id":"p-jug","key":"green-jug","name":{"en-AU":"Green Stoneware Jug"},"brand":"Potter","categoryId":"cat-mugs","status":"inactive","variants":[{"id":1,"sku":"JUG-GREEN","prices":[{"currencyCode":"AUD","centAmount":4900}]}]}"#,
        r#"{"type":"collection","id":"col-new","key":"new","name":{"en-AU":"New in"},"productIds":["p-mug"]}"#,
    ]
    .join("\n")
}

fn feed_file(contents: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("feed-{}.ndjson", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, contents).unwrap();
    path
}

async fn the_feed_is_the_catalog(backend: Backend) {
    let path = feed_file(&small_feed());
    let t = spawn_mesh_on(backend, &[("CATALOG_FEED", path.to_str().unwrap())]).await;
    let listing = t.ok("/products").await;
    assert_eq!(listing["total"], 2);
    assert_eq!(listing["results"][0]["key"], "blue-mug");
    let mug = t.ok("/products/p-mug?currency=NZD").await;
    assert_eq!(mug["price"]["centAmount"], 2695);
    assert_eq!(mug["variants"][0]["availability"]["quantity"], 7);
    assert_eq!(mug["categoryIds"], serde_json::json!(["cat-mugs"]));
    assert_eq!(t.ok("/categories").await["total"], 1);
    assert_eq!(
        t.ok("/collections").await["results"][0]["productIds"][0],
        "p-mug"
    );
    let found = t.ok("/search?query=stoneware&status=active").await;
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["results"][0]["id"], "p-mug");
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn the_feed_is_the_catalog_in_memory() {
    the_feed_is_the_catalog(Backend::Memory).await;
}

#[tokio::test]
async fn the_feed_is_the_catalog_on_redis() {
    the_feed_is_the_catalog(Backend::Redis).await;
}

/// A feed served over HTTP is streamed in, not downloaded first.
#[tokio::test]
async fn a_feed_at_a_url_is_streamed_in() {
    let feed = small_feed();
    let server = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/exports/shop.ndjson?signature=secret",
        server.local_addr().unwrap()
    );
    let app = axum::Router::new().route(
        "/exports/shop.ndjson",
        axum::routing::get(move || async move { feed }),
    );
    tokio::spawn(async move { axum::serve(server, app).await });
    let t = spawn_mesh_on(Backend::Memory, &[("CATALOG_FEED", url.as_str())]).await;
    assert_eq!(t.ok("/products").await["total"], 2);
    assert!(
        !crate::logs::captured().contains("signature=secret"),
        "a signed URL's query never reaches the log"
    );
}

/// A bad feed stops the catalog before it serves, and with it the mesh
/// (a non-zero exit): every problem is in the error, with its line.
#[tokio::test]
async fn a_bad_feed_stops_the_catalog_with_every_problem() {
    let bad = small_feed()
        .replace(r#""centAmount":2495"#, r#""centAmount":-1"#)
        .replace(
            r#""categoryId":"cat-mugs","status""#,
            r#""categoryId":"cat-none","status""#,
        );
    let path = feed_file(&bad);
    crate::logs::install();
    let options = MeshOptions {
        env: EnvReader::from_pairs([("CATALOG_FEED", path.to_str().unwrap())]),
        gateway: Some(TcpListener::bind("127.0.0.1:0").await.unwrap()),
        stand_ins: Vec::new(),
    };
    let mesh = Mesh::start_with(options).await.expect("the programs start");
    // As `cargo run` does: the mesh runs until a program fails.
    let stopped = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mesh.run_until(tokio_util::sync::CancellationToken::new()),
    )
    .await
    .expect("the catalog stops at once");
    let error = format!("{:#}", stopped.expect_err("a mesh served a bad feed"));
    assert!(error.starts_with("catalog failed"), "{error}");
    assert!(error.contains("2 problem(s)"), "{error}");
    assert!(
        error.contains("line 3: variants[0].prices[0].centAmount: must be 0 or more"),
        "{error}"
    );
    assert!(
        error.contains("line 4: categoryId: is not a category"),
        "{error}"
    );
    let _ = std::fs::remove_file(path);
}
