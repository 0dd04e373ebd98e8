//! Issue 52: replicas come and go without a failed read. Three catalog
//! replicas and two cart replicas behind one gateway (address lists),
//! connections aged out every two seconds, and under load from the test
//! one catalog replica is killed (SIGKILL), another stopped (SIGTERM), a
//! cart replica killed, and each started again on its address: every read
//! answers 200; a write answers 2xx, or 503 with `Retry-After`, and its
//! retry with the same `Idempotency-Key` applies it exactly once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use super::Processes;
use crate::helpers::Api;
use crate::journey::{Shopper, buyable};

/// Line adds, one unit each over `products`, until `stop`, each retried
/// with its key while it answers 503: (adds applied, 503s seen).
async fn write(
    shopper: Shopper<'_>,
    products: Vec<String>,
    stop: Arc<AtomicBool>,
    most: u64,
) -> (u64, u64, String) {
    let cart = shopper.cart().await;
    let (mut done, mut unavailable) = (0u64, 0u64);
    let path = format!("/carts/{cart}/line-items");
    while !stop.load(Ordering::Relaxed) && done < most {
        let product = &products[done as usize % products.len()];
        let body = json!({"productId": product, "variantId": 1, "quantity": 1});
        let key = format!("add-{done}");
        loop {
            let request = shopper
                .t
                .json(Method::POST, &path, Some(&shopper.token), &body)
                .header("Idempotency-Key", &key);
            let reply = shopper.t.send(request).await;
            match reply.status.as_u16() {
                200 => break,
                503 => {
                    assert!(reply.header("retry-after").is_some(), "{}", reply.body);
                    unavailable += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                _ => panic!("a line add answered {}: {}", reply.status, reply.body),
            }
        }
        done += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (done, unavailable, cart)
}

/// Reads from `workers` loops until `stop`: (answered 200, every other
/// status with its body).
async fn load(api: Arc<Api>, stop: Arc<AtomicBool>, workers: usize) -> (u64, Vec<String>) {
    let ok = Arc::new(AtomicU64::new(0));
    let began = Instant::now();
    let tasks = (0..workers).map(|w| {
        let (api, stop, ok) = (api.clone(), stop.clone(), ok.clone());
        tokio::spawn(async move {
            let mut failed = Vec::new();
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                i += workers;
                let path = if i % 2 == 0 {
                    format!("/products?limit=20&offset={}", (i * 7) % 900)
                } else {
                    format!("/search?query=shirt&limit=5&offset={}", i % 40)
                };
                let sent = began.elapsed().as_secs_f64();
                let reply = api.fetch(&path).await;
                if reply.status == 200 {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    let code = &reply.body["code"];
                    failed.push(format!("{sent:.2}s {path}: {} {code}", reply.status));
                }
            }
            failed
        })
    });
    let failed: Vec<String> = futures::future::join_all(tasks)
        .await
        .into_iter()
        .flat_map(|r| r.expect("a load task"))
        .collect();
    (ok.load(Ordering::Relaxed), failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_come_and_go_without_a_failed_read() {
    let aged = ("GRPC_MAX_CONNECTION_AGE_SECS".to_string(), "2".to_string());
    let configure = |_: &str, env: &mut Vec<(String, String)>, _: &super::Addrs| {
        env.push(aged.clone());
    };
    let mut mesh = Processes::start(configure).await;
    mesh.add("catalog", "catalog-2", std::slice::from_ref(&aged))
        .await;
    mesh.add("catalog", "catalog-3", std::slice::from_ref(&aged))
        .await;
    mesh.add("cart", "cart-2", std::slice::from_ref(&aged))
        .await;
    let replicas = ["catalog", "catalog-2", "catalog-3"].map(|k| mesh.addrs.url(k));
    let carts = ["cart", "cart-2"].map(|k| mesh.addrs.url(k));
    let gateway_env = vec![
        ("CATALOG_URL".to_string(), replicas.join(",")),
        ("CART_URL".to_string(), carts.join(",")),
        ("SEARCH_URL".to_string(), mesh.addrs.url("search")),
        ("RATE_LIMIT_IP".to_string(), "off".to_string()),
        ("RATE_LIMIT_SEARCH".to_string(), "off".to_string()),
        aged.clone(),
    ];
    mesh.add("gateway", "gateway-2", &gateway_env).await;
    let api = Arc::new(Api {
        base: mesh.addrs.url("gateway-2"),
        http: reqwest::Client::new(),
    });
    api.wait_ready().await;
    let stop = Arc::new(AtomicBool::new(false));
    let running = tokio::spawn(load(api.clone(), stop.clone(), 8));
    let products: Vec<String> = buyable(&api, 20)
        .await
        .into_iter()
        .map(|p| p.0)
        .take(20)
        .collect();
    let writer = {
        let (api, stop) = (api.clone(), stop.clone());
        tokio::spawn(async move {
            let shopper = Shopper::new(&api).await;
            let token = shopper.token.clone();
            let (done, unavailable, cart) = write(shopper, products, stop, 300).await;
            (done, unavailable, cart, token)
        })
    };
    let started = Instant::now();
    let at = |s: f64| async move {
        let until = started + Duration::from_secs_f64(s);
        tokio::time::sleep_until(until.into()).await;
    };

    at(1.0).await;
    let killed_at = mesh.addrs.addr("catalog-2");
    mesh.replica("catalog-2").kill();
    at(1.5).await;
    let cart_at = mesh.addrs.addr("cart-2");
    mesh.replica("cart-2").kill();
    at(2.5).await;
    let stopped_at = mesh.addrs.addr("catalog-3");
    mesh.replica("catalog-3").terminate();
    mesh.replica("catalog-3")
        .wait(Duration::from_secs(30))
        .await;
    at(3.5).await;
    let again = |addr: std::net::SocketAddr| {
        vec![("LISTEN_ADDR".to_string(), addr.to_string()), aged.clone()]
    };
    mesh.add("catalog", "catalog-2b", &again(killed_at)).await;
    mesh.add("cart", "cart-2b", &again(cart_at)).await;
    at(5.0).await;
    mesh.add("catalog", "catalog-3b", &again(stopped_at)).await;
    // Past three connection-age boundaries with every replica back.
    at(7.5).await;
    stop.store(true, Ordering::Relaxed);
    let (ok, failed) = running.await.expect("the load");
    let (done, unavailable, cart, token) = writer.await.expect("the writer");
    println!(
        "churn: {ok} reads answered 200, {} failed; {done} line adds applied, {unavailable} answers 503 retried",
        failed.len()
    );
    // Each add applied once, whatever was retried.
    assert_eq!(units_in(&api, &cart, &token).await, done);
    assert!(ok > 200, "the load ran: {ok}");
    if !failed.is_empty() {
        let log = mesh.replica("gateway-2").log();
        for line in log
            .lines()
            .filter(|l| !l.contains(r#""level":"INFO""#))
            .take(20)
        {
            eprintln!("{}", &line[..line.len().min(600)]);
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(5)]
    );
}

/// The units in `cart`, read as its owner (`token`).
async fn units_in(api: &Api, cart: &str, token: &str) -> u64 {
    let read = api
        .send(api.authed(Method::GET, &format!("/carts/{cart}"), token))
        .await;
    assert_eq!(read.status, 200, "{}", read.body);
    read.body["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["quantity"].as_u64().unwrap())
        .sum()
}

/// Whether the gRPC service at `addr` says it is serving.
async fn serving(addr: std::net::SocketAddr) -> bool {
    let Ok(channel) = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .map(|e| e.connect_timeout(Duration::from_millis(300)))
    else {
        return false;
    };
    let Ok(channel) = channel.connect().await else {
        return false;
    };
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let asked = tonic_health::pb::HealthCheckRequest {
        service: String::new(),
    };
    matches!(
        health.check(asked).await.map(|r| r.into_inner().status()),
        Ok(tonic_health::pb::health_check_response::ServingStatus::Serving)
    )
}

/// The churn benchmark (issue 52; `bench/churn.sh` runs it): two replicas
/// of every service program behind a gateway, 8 readers (listings,
/// search, detail, content, a profile) and a writer (line adds with
/// `Idempotency-Key`s, retried on 503), while every replica of every
/// program is restarted in turn (SIGTERM, started again on its address,
/// serving before the next). Prints failed reads per 100,000 and the
/// writes that answered 503; fails on any failed read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: bench/churn.sh"]
async fn rolling_restart_of_every_program() {
    const PROGRAMS: [&str; 6] = [
        "catalog",
        "search",
        "cart",
        "orders",
        "customers",
        "content",
    ];
    let (pem, _, _) = crate::auth_tokens::signing_key();
    let key = ("TOKEN_SIGNING_KEY".to_string(), pem.clone());
    let configure = |program: &str, env: &mut Vec<(String, String)>, _: &super::Addrs| {
        if program == "customers" {
            env.push(key.clone());
        }
    };
    let mut mesh = Processes::start(configure).await;
    for program in PROGRAMS {
        let own = if program == "customers" {
            vec![key.clone()]
        } else {
            Vec::new()
        };
        mesh.add(program, &format!("{program}-2"), &own).await;
    }
    let mut gateway_env: Vec<(String, String)> = PROGRAMS
        .iter()
        .map(|p| {
            let urls = [mesh.addrs.url(p), mesh.addrs.url(&format!("{p}-2"))];
            (format!("{}_URL", p.to_uppercase()), urls.join(","))
        })
        .collect();
    gateway_env.push(("RATE_LIMIT_IP".into(), "off".into()));
    gateway_env.push(("RATE_LIMIT_SEARCH".into(), "off".into()));
    gateway_env.push(("RATE_LIMIT_SESSION".into(), "off".into()));
    mesh.add("gateway", "gateway-2", &gateway_env).await;
    let api = Arc::new(Api {
        base: mesh.addrs.url("gateway-2"),
        http: reqwest::Client::new(),
    });
    api.wait_ready().await;
    let reader = Shopper::new(&api).await;
    let profile = reader.token.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let reads = tokio::spawn(read_everything(api.clone(), stop.clone(), profile));
    let products: Vec<String> = buyable(&api, 40)
        .await
        .into_iter()
        .map(|p| p.0)
        .take(20)
        .collect();
    let most = 35 * products.len() as u64;
    let writer = {
        let (api, stop) = (api.clone(), stop.clone());
        tokio::spawn(async move {
            let shopper = Shopper::new(&api).await;
            let token = shopper.token.clone();
            let (done, unavailable, cart) = write(shopper, products, stop, most).await;
            (done, unavailable, cart, token)
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    for program in PROGRAMS {
        for replica in [program.to_string(), format!("{program}-2")] {
            mesh.restart(&replica).await;
            let addr = mesh.addrs.addr(&replica);
            let deadline = Instant::now() + Duration::from_secs(30);
            while !serving(addr).await {
                assert!(Instant::now() < deadline, "{replica} never served again");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Under load a while with both replicas, as a rollout is.
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let (ok, failed) = reads.await.expect("the readers");
    let (done, unavailable, cart, token) = writer.await.expect("the writer");
    assert_eq!(
        units_in(&api, &cart, &token).await,
        done,
        "each write applied once"
    );
    let per_100k = failed.len() as f64 * 100_000.0 / (ok as f64 + failed.len() as f64);
    println!(
        "{}",
        json!({"reads": ok + failed.len() as u64, "failed_reads": failed.len(),
            "failed_reads_per_100000": per_100k, "writes": done, "writes_answered_503": unavailable,
            "restarted": PROGRAMS.len() * 2})
    );
    assert!(failed.is_empty(), "{:?}", &failed[..failed.len().min(5)]);
}

/// Reads of every service until `stop`: (answered 200, the others).
async fn read_everything(
    api: Arc<Api>,
    stop: Arc<AtomicBool>,
    token: String,
) -> (u64, Vec<String>) {
    let ok = Arc::new(AtomicU64::new(0));
    let tasks = (0..8).map(|w| {
        let (api, stop, ok, token) = (api.clone(), stop.clone(), ok.clone(), token.clone());
        tokio::spawn(async move {
            let mut failed = Vec::new();
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                i += 8;
                let reply = match i % 5 {
                    0 => {
                        api.fetch(&format!("/products?limit=20&offset={}", (i * 7) % 900))
                            .await
                    }
                    1 => {
                        api.fetch(&format!("/search?query=shirt&limit=5&offset={}", i % 40))
                            .await
                    }
                    2 => api.fetch("/content/footer").await,
                    3 => {
                        api.send(api.authed(Method::GET, "/customers/me", &token))
                            .await
                    }
                    _ => api.fetch("/categories/tree").await,
                };
                if reply.status == 200 {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    failed.push(format!("{}: {}", reply.status, reply.body));
                }
            }
            failed
        })
    });
    let failed = futures::future::join_all(tasks)
        .await
        .into_iter()
        .flat_map(|r| r.expect("a reader"))
        .collect();
    (ok.load(Ordering::Relaxed), failed)
}
