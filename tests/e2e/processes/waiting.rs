//! A search replica whose catalog is away listens at once, alive and not
//! ready (what the chart's liveness and readiness probes ask), refuses
//! searches as unavailable rather than answering from an empty index, and
//! becomes ready once the catalog answers: it waits, it never exits.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use super::{Processes, proxy};
use crate::helpers::Api;

async fn status(addr: SocketAddr, service: &str) -> ServingStatus {
    let channel = tonic::transport::Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("search listens");
    let reply = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: service.into(),
        })
        .await
        .expect("health answers");
    reply.into_inner().status()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_waits_for_its_catalog_alive_and_not_ready() {
    let mut mesh = Processes::start(|_, _, _| {}).await;
    // Refuses every connection until the catalog's address is set.
    let catalog = Arc::new(OnceLock::new());
    let away = proxy::delaying(catalog.clone(), Duration::ZERO).await;
    let env = [("CATALOG_URL".to_string(), format!("http://{away}"))];
    mesh.add("search", "search-2", &env).await;
    let search = mesh.addrs.addr("search-2");
    let gateway_env = [("SEARCH_URL".to_string(), format!("http://{search}"))];
    mesh.add("gateway", "gateway-2", &gateway_env).await;
    let shopper = Api {
        base: mesh.addrs.url("gateway-2"),
        http: reqwest::Client::new(),
    };
    let service = "storefront.search.v1.SearchService";
    // Three seconds without a catalog: alive, not ready, still running.
    for _ in 0..3 {
        assert_eq!(status(search, "liveness").await, ServingStatus::Serving);
        assert_eq!(status(search, "").await, ServingStatus::NotServing);
        assert_eq!(status(search, service).await, ServingStatus::NotServing);
        shopper
            .fetch("/search?query=shirt")
            .await
            .error(503, "SERVICE_UNAVAILABLE");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let replica = mesh
        .programs
        .iter_mut()
        .find(|p| p.key == "search-2")
        .unwrap();
    assert!(replica.child.try_wait().unwrap().is_none(), "search exited");
    catalog.set(mesh.addrs.addr("catalog")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(search, "").await != ServingStatus::Serving {
        assert!(Instant::now() < deadline, "search never became ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status(search, service).await, ServingStatus::Serving);
    let found = shopper.ok("/search?query=shirt").await;
    assert!(found["total"].as_u64().unwrap() > 0, "{found}");
}
