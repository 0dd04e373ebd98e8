//! The customer journey through eight separate processes.

use reqwest::Method;

use super::Processes;
use crate::journey::journey;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journey_through_separate_processes() {
    let mesh = Processes::start(|_, _, _| {}).await;
    let api = &mesh.api;
    journey(api).await;

    // Search (its own index, built from the catalog process over gRPC) and
    // content answer through the same gateway.
    let search = api.ok("/search?query=shirt&limit=3").await;
    assert!(search["total"].as_u64().unwrap() > 0, "{search}");
    let about = api.fetch("/content/pages/about").await;
    assert_eq!(about.status, 200, "{}", about.body);
    let openapi = api.send(api.request(Method::GET, "/openapi.json")).await;
    assert_eq!(openapi.body["openapi"], "3.1.0");

    // The containers' health check: the binary probing a program.
    let probe = |target: String| {
        std::process::Command::new(env!("CARGO_BIN_EXE_storefront"))
            .args(["probe", &target])
            .output()
            .expect("probe runs")
            .status
            .success()
    };
    assert!(probe(format!("{}/health/ready", api.base)));
    assert!(probe(format!("grpc://{}", mesh.addrs.addr("catalog"))));
    assert!(
        !probe(format!("{}/no-such-page", api.base)),
        "a 404 is unhealthy"
    );
    // Bound but not listening: refused, and no one else can take it.
    let held = tokio::net::TcpSocket::new_v4().unwrap();
    held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let nothing = held.local_addr().unwrap();
    assert!(
        !probe(format!("grpc://{nothing}")),
        "nothing listening is unhealthy"
    );
}
