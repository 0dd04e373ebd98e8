//! Prometheus metrics on each program's metrics port: request counts and
//! latency per route and per gRPC method, store latency, rate-limit
//! rejections.

use super::Processes;

/// The value of the series whose line starts with `prefix` and contains
/// every one of `labels`.
fn series(text: &str, prefix: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(prefix) && labels.iter().all(|label| l.contains(label)))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_publish_prometheus_metrics() {
    let mesh = Processes::start(|program, env, _| {
        if !["gateway", "catalog", "cart", "search"].contains(&program) {
            return;
        }
        env.push(("METRICS_LISTEN_ADDR".into(), "127.0.0.1:0".into()));
        if program == "gateway" {
            env.push(("RATE_LIMIT_SEARCH".into(), "2/60s".into()));
        }
    })
    .await;
    let api = &mesh.api;
    for _ in 0..3 {
        api.ok("/products?limit=2").await;
    }
    let session = api.new_session().await;
    let token = session["accessToken"].as_str().unwrap();
    let created = api
        .send(api.authed(reqwest::Method::POST, "/carts", token))
        .await;
    assert_eq!(created.status, 201);
    api.fetch("/products/no-such-product")
        .await
        .error(404, "NOT_FOUND");
    let mut limited = 0;
    for _ in 0..4 {
        if api.fetch("/search?query=shirt").await.status == 429 {
            limited += 1;
        }
    }
    assert!(limited > 0);

    let scrape = |program: &str| {
        let url = format!("{}/metrics", mesh.addrs.url(&format!("{program}-metrics")));
        async move { reqwest::get(url).await.unwrap().text().await.unwrap() }
    };
    let gateway = scrape("gateway").await;
    let route = r#"route="/products""#;
    assert!(
        series(&gateway, "http_requests_total", &[route, r#"status="200""#]).unwrap() >= 3.0,
        "{gateway}"
    );
    assert_eq!(
        series(
            &gateway,
            "http_requests_total",
            &[r#"route="/products/{productId}""#, r#"status="404""#]
        ),
        Some(1.0),
        "{gateway}"
    );
    assert!(series(&gateway, "http_request_duration_seconds_count", &[route]).unwrap() >= 3.0);
    assert!(
        series(
            &gateway,
            "http_request_duration_seconds_bucket",
            &[route, r#"le="+Inf""#]
        )
        .is_some()
    );
    assert_eq!(
        series(
            &gateway,
            "rate_limit_rejections_total",
            &[r#"scope="search""#]
        ),
        Some(limited as f64),
        "{gateway}"
    );

    let catalog = scrape("catalog").await;
    let list = r#"method="/storefront.catalog.v1.CatalogService/ListProducts""#;
    assert!(
        series(
            &catalog,
            "grpc_server_requests_total",
            &[list, r#"code="0""#]
        )
        .unwrap()
            >= 3.0,
        "{catalog}"
    );
    let get = r#"method="/storefront.catalog.v1.CatalogService/GetProduct""#;
    assert_eq!(
        series(
            &catalog,
            "grpc_server_requests_total",
            &[get, r#"code="5""#]
        ),
        Some(1.0),
        "{catalog}"
    );
    assert!(
        series(
            &catalog,
            "grpc_server_request_duration_seconds_count",
            &[list]
        )
        .is_some()
    );

    // Search has indexed the version the catalog serves: no lag.
    let version = series(&catalog, "catalog_version ", &[]).expect("catalog_version");
    assert!(version >= 1.0, "{catalog}");
    let search = scrape("search").await;
    assert_eq!(
        series(&search, "search_index_catalog_version ", &[]),
        Some(version),
        "{search}"
    );

    let cart = scrape("cart").await;
    assert!(
        series(
            &cart,
            "store_operation_duration_seconds_count",
            &[r#"op="insert""#]
        )
        .unwrap()
            >= 1.0,
        "{cart}"
    );
}
