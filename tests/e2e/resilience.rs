//! The whole mesh with one downstream replaced by a stand-in that
//! misbehaves: one that hangs is a 504 within the deadline, one that
//! answers garbage a 502, one that is gone a 503; each in the spec's error
//! shape. The stand-ins listen on ports the tests hold from the start.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::Response;
use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer::JWKS_PATH;
use storefront_platform::topology::{self, Program};
use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;

use crate::helpers::{Reply, TestMesh, spawn_mesh_standing_in};

/// A mesh whose catalog is the stand-in at `url`, with a short deadline.
async fn mesh_with_catalog(url: &str, vars: &[(&str, &str)]) -> TestMesh {
    mesh_with(&topology::CATALOG, url, vars).await
}

async fn mesh_with(program: &'static Program, url: &str, vars: &[(&str, &str)]) -> TestMesh {
    let mut all = vec![("GRPC_TIMEOUT_MS", "400")];
    all.extend_from_slice(vars);
    spawn_mesh_standing_in(program, url, &all).await
}

async fn products(t: &TestMesh) -> (Reply, Duration) {
    let started = std::time::Instant::now();
    (t.fetch("/products").await, started.elapsed())
}

#[tokio::test]
async fn a_hanging_downstream_is_a_504_within_the_deadline() {
    // Accepts connections and never answers.
    let t = mesh_with_catalog(&silent_server().await, &[]).await;
    let (reply, took) = products(&t).await;
    reply.error(504, "GATEWAY_TIMEOUT");
    assert_eq!(reply.body["type"], "api_error");
    assert!(
        took < Duration::from_secs(5),
        "answered at the deadline, not after {took:?}"
    );
}

#[tokio::test]
async fn garbage_from_a_downstream_is_a_502() {
    // Speaks HTTP/2 and gRPC framing, but the message is no protobuf.
    let garbage = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", garbage.local_addr().unwrap());
    let app = Router::new().fallback(|| async {
        Response::builder()
            .header("content-type", "application/grpc")
            .body(Body::from(&b"\x00\x00\x00\x00\x07garbage"[..]))
            .unwrap()
    });
    tokio::spawn(async move { axum::serve(garbage, app).await });
    let t = mesh_with_catalog(&url, &[]).await;
    products(&t).await.0.error(502, "BAD_GATEWAY");
}

#[tokio::test]
async fn a_missing_downstream_is_a_503() {
    // A port below 1024 is never handed out for port 0, so no other test's
    // server can take it between a bind and the call (as with a freed
    // ephemeral port under a loaded parallel run): nothing listens there.
    let t = mesh_with_catalog("http://127.0.0.1:1", &[]).await;
    products(&t).await.0.error(503, "SERVICE_UNAVAILABLE");
}

#[tokio::test]
async fn reads_retry_until_a_returning_downstream_answers() {
    let (reserved, port) = reserved_port();
    let t = mesh_with_catalog(&format!("http://127.0.0.1:{port}"), &[]).await;
    // The catalog comes (back) up shortly after the request is made.
    let issuer_url = t.mesh.issuer_url.clone();
    let catalog = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(60)).await;
        start_catalog(reserved, &issuer_url).await
    });
    let (reply, _) = products(&t).await;
    assert_eq!(
        reply.status, 200,
        "the read was retried, not lost: {}",
        reply.body
    );
    assert_eq!(reply.body["total"], 50);
    catalog.await.unwrap().cancel();
}

/// A port held but not listened on: connections are refused until
/// `start_catalog` listens on it, and no one else can take it meanwhile.
fn reserved_port() -> (TcpSocket, u16) {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// A server that accepts connections and never answers; its URL.
async fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    url
}

/// A real catalog of 50 products on `socket`, trusting the mesh's issuer.
async fn start_catalog(socket: TcpSocket, issuer_url: &str) -> CancellationToken {
    let env = EnvReader::from_pairs([
        ("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}")),
        ("CATALOG_SIZE", "50".to_string()),
    ]);
    let config = storefront_catalog::CatalogConfig::from_env(&env).unwrap();
    let stop = CancellationToken::new();
    let listener = socket.listen(1024).unwrap();
    let serving = storefront_platform::service::Serving {
        listener,
        store: storefront_platform::store::Store::memory(),
        shutdown: stop.clone(),
    };
    tokio::spawn(storefront_catalog::serve(config, serving));
    stop
}

#[tokio::test]
async fn a_failing_downstream_opens_its_circuit_then_recovers() {
    let metrics = storefront_platform::telemetry::metrics::handle();
    let (reserved, port) = reserved_port();
    let vars = [("BREAKER_THRESHOLD", "2"), ("BREAKER_OPEN_MS", "300")];
    let t = mesh_with_catalog(&format!("http://127.0.0.1:{port}"), &vars).await;
    for _ in 0..2 {
        products(&t).await.0.error(503, "SERVICE_UNAVAILABLE");
    }
    let (open, _) = products(&t).await;
    open.error(503, "CIRCUIT_OPEN");
    assert!(open.body["message"].as_str().unwrap().contains("catalog"));
    // What a dashboard shows (the process's one recorder, which other
    // tests share: only what they cannot take back is asserted).
    let text = metrics.render();
    let refused = r#"downstream_calls_refused_total{downstream="catalog",reason="circuit_open"}"#;
    assert!(text.lines().any(|l| l.starts_with(refused)), "{text}");
    assert!(
        text.contains(r#"downstream_circuit_open{downstream="catalog"}"#),
        "{text}"
    );
    let catalog = start_catalog(reserved, &t.mesh.issuer_url).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (back, _) = products(&t).await;
    assert_eq!(
        back.status, 200,
        "closed again once the service answers: {}",
        back.body
    );
    catalog.cancel();
}

/// Writes feed the breaker as reads do (they are never retried): a
/// customers service that cannot be reached opens its circuit for logins.
#[tokio::test]
async fn failing_writes_open_the_circuit_too() {
    let (_reserved, port) = reserved_port();
    let url = format!("http://127.0.0.1:{port}");
    let t = mesh_with(&topology::CUSTOMERS, &url, &[("BREAKER_THRESHOLD", "2")]).await;
    let login = || {
        let body = serde_json::json!({
            "emailAddress": "ava@example.com", "password": "x", "gRecaptchaResponse": "dev-ok",
        });
        t.send(t.json(reqwest::Method::POST, "/auth/login", None, &body))
    };
    for _ in 0..2 {
        login().await.error(503, "SERVICE_UNAVAILABLE");
    }
    let open = login().await;
    open.error(503, "CIRCUIT_OPEN");
    assert!(open.body["message"].as_str().unwrap().contains("customers"));
}

#[tokio::test]
async fn a_route_with_its_own_deadline_answers_at_it() {
    // The channel would wait 30 s; /products may wait 300 ms.
    let vars = [
        ("GRPC_TIMEOUT_MS", "30000"),
        ("ROUTE_TIMEOUTS", "/products=300"),
    ];
    let t = mesh_with_catalog(&silent_server().await, &vars).await;
    let (reply, took) = products(&t).await;
    reply.error(504, "GATEWAY_TIMEOUT");
    assert!(
        took < Duration::from_secs(10),
        "the route's deadline, not the channel's: {took:?}"
    );
}

#[tokio::test]
async fn deadlines_do_not_open_the_circuit() {
    // One expensive request past its deadline says nothing about the
    // downstream's health: it must not close the route for everyone.
    let vars = [("BREAKER_THRESHOLD", "2"), ("GRPC_TIMEOUT_MS", "200")];
    let t = mesh_with_catalog(&silent_server().await, &vars).await;
    for _ in 0..4 {
        products(&t).await.0.error(504, "GATEWAY_TIMEOUT");
    }
}

#[tokio::test]
async fn calls_beyond_a_downstream_s_concurrency_are_shed_with_retry_after() {
    let metrics = storefront_platform::telemetry::metrics::handle();
    let vars = [("DOWNSTREAM_CONCURRENCY", "2"), ("GRPC_TIMEOUT_MS", "1500")];
    let t = mesh_with_catalog(&silent_server().await, &vars).await;
    let replies = futures::future::join_all((0..6).map(|_| products(&t))).await;
    let shed: Vec<_> = replies.iter().filter(|(r, _)| r.status == 503).collect();
    let waited = replies.iter().filter(|(r, _)| r.status == 504).count();
    let all: Vec<_> = replies
        .iter()
        .map(|(r, _)| (r.status, r.body["code"].clone()))
        .collect();
    assert_eq!(
        (shed.len(), waited),
        (4, 2),
        "two in flight, the rest shed: {all:?}"
    );
    for (reply, took) in shed {
        reply.error(503, "DOWNSTREAM_BUSY");
        assert_eq!(reply.header("retry-after"), Some("1"));
        assert!(
            *took < Duration::from_millis(1_000),
            "shed at once: {took:?}"
        );
    }
    let text = metrics.render();
    let line = r#"downstream_calls_refused_total{downstream="catalog",reason="shed"} "#;
    let counted: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix(line)?.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(counted >= 4.0, "{text}");
}

/// A cart service that is up but says its own downstream is away
/// (UNAVAILABLE in its own words), or that it has no room (RESOURCE
/// EXHAUSTED): neither opens the cart's circuit, and neither reaches the
/// client as its own rate limit.
#[tokio::test]
async fn a_peer_speaking_for_its_own_downstream_is_not_failing() {
    use storefront_platform::error::{ErrorKind, ServiceError};
    use storefront_proto::cart::v1::{AddLineItemRequest, Cart, GetCartRequest};
    use tonic::Status;

    let (fake, _) = crate::fake::Fake::default().answer(
        "/storefront.cart.v1.CartService/AddLineItem",
        |asked: &AddLineItemRequest| -> Result<Cart, Status> {
            Err(match asked.quantity {
                1 => ServiceError::new(
                    ErrorKind::Unavailable,
                    "CATALOG_UNAVAILABLE",
                    "the catalog is unreachable",
                )
                .into(),
                _ => Status::resource_exhausted("message larger than max"),
            })
        },
    );
    let (fake, _) = fake.answer(
        "/storefront.cart.v1.CartService/GetCart",
        |_: &GetCartRequest| -> Result<Cart, Status> {
            Err(ServiceError::not_found("cart", "c-1").into())
        },
    );
    let url = fake.serve().await;
    let t = mesh_with(&topology::CART, &url, &[("BREAKER_THRESHOLD", "2")]).await;
    let token = t.new_session().await["accessToken"]
        .as_str()
        .unwrap()
        .to_string();
    let add = |quantity: u32| {
        let body = serde_json::json!({"productId": "p-1", "variantId": 1, "quantity": quantity});
        t.send(t.json(
            reqwest::Method::POST,
            "/carts/c-1/line-items",
            Some(&token),
            &body,
        ))
    };
    for _ in 0..5 {
        add(1).await.error(503, "SERVICE_UNAVAILABLE");
    }
    let exhausted = add(2).await;
    exhausted.error(503, "DOWNSTREAM_BUSY");
    assert_eq!(exhausted.header("retry-after"), Some("1"));
    let read = t
        .send(t.authed(reqwest::Method::GET, "/carts/c-1", &token))
        .await;
    read.error(404, "NOT_FOUND");
}
