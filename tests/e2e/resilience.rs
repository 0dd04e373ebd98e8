//! A gateway in front of downstreams that misbehave: one that hangs is a 504
//! within the deadline, one that answers garbage a 502, one that is gone a
//! 503; each in the spec's error shape.

use axum::Router;
use axum::body::Body;
use axum::http::Response;
use storefront_common::env::EnvReader;
use storefront_common::identity::dev_issuer::{DevIssuer, JWKS_PATH};
use storefront_common::store::Store;
use storefront_gateway::GatewayConfig;
use storefront_gateway::config::dev_identity_url;
use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;

use crate::helpers::Reply;

/// A dev identity issuer of its own: all a lone gateway and catalog need
/// of a mesh. Stops when dropped.
pub(crate) struct Issuer {
    pub(crate) url: String,
    _stop: tokio_util::sync::DropGuard,
}

pub(crate) async fn issuer() -> Issuer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let dev = DevIssuer::generate(std::time::Duration::from_secs(3600)).unwrap();
    tokio::spawn(dev.serve(listener, stop.clone()));
    Issuer {
        url,
        _stop: stop.drop_guard(),
    }
}

/// A gateway of its own whose catalog is at `catalog_url`, with a short
/// deadline; identity from `issuer_url`.
async fn gateway(catalog_url: &str, issuer_url: &str) -> (String, CancellationToken) {
    gateway_with(catalog_url, issuer_url, &[]).await
}

pub(crate) async fn gateway_with(
    catalog_url: &str,
    issuer_url: &str,
    extra: &[(&str, &str)],
) -> (String, CancellationToken) {
    let mut env = EnvReader::from_pairs([
        ("CATALOG_URL", catalog_url.to_string()),
        ("IDENTITY_TOKEN_URL", dev_identity_url(issuer_url)),
        ("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}")),
        ("GRPC_TIMEOUT_MS", "400".to_string()),
    ]);
    for (k, v) in extra {
        env.set(k, *v);
    }
    let config = GatewayConfig::from_env(&env).unwrap();
    let public = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let internal = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", public.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(storefront_gateway::serve(
        config,
        Store::memory(),
        public,
        internal,
        stop.clone(),
    ));
    (base, stop)
}

async fn products(base: &str) -> (Reply, std::time::Duration) {
    let started = std::time::Instant::now();
    let request = reqwest::Client::new()
        .get(format!("{base}/products"))
        .header("X-Api-Version", "v1.0");
    (send(request).await, started.elapsed())
}

pub(crate) async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

#[tokio::test]
async fn a_hanging_downstream_is_a_504_within_the_deadline() {
    let issuer = issuer().await;
    // Accepts connections and never answers.
    let url = silent_server().await;
    let (base, stop) = gateway(&url, &issuer.url).await;
    let (reply, took) = products(&base).await;
    reply.error(504, "GATEWAY_TIMEOUT");
    assert_eq!(reply.body["type"], "api_error");
    assert!(
        took < std::time::Duration::from_secs(5),
        "answered at the deadline, not after {took:?}"
    );
    stop.cancel();
}

#[tokio::test]
async fn garbage_from_a_downstream_is_a_502() {
    let issuer = issuer().await;
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
    let (base, stop) = gateway(&url, &issuer.url).await;
    let (reply, _) = products(&base).await;
    reply.error(502, "BAD_GATEWAY");
    stop.cancel();
}

#[tokio::test]
async fn a_missing_downstream_is_a_503() {
    let issuer = issuer().await;
    // A port below 1024 is never handed out for port 0, so no other test's
    // server can take it between a bind and the call (as with a freed
    // ephemeral port under a loaded parallel run): nothing listens there.
    let port = 1;
    let (base, stop) = gateway(&format!("http://127.0.0.1:{port}"), &issuer.url).await;
    let (reply, _) = products(&base).await;
    reply.error(503, "SERVICE_UNAVAILABLE");
    stop.cancel();
}

#[tokio::test]
async fn reads_retry_until_a_returning_downstream_answers() {
    let issuer = issuer().await;
    let (reserved, port) = reserved_port();
    let (base, stop) = gateway(&format!("http://127.0.0.1:{port}"), &issuer.url).await;
    // The catalog comes (back) up shortly after the request is made.
    let issuer_url = issuer.url.clone();
    let catalog = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        start_catalog(reserved, &issuer_url).await
    });
    let (reply, _) = products(&base).await;
    assert_eq!(
        reply.status, 200,
        "the read was retried, not lost: {}",
        reply.body
    );
    assert_eq!(reply.body["total"], 50);
    catalog.await.unwrap().cancel();
    stop.cancel();
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

async fn start_catalog(socket: TcpSocket, issuer_url: &str) -> CancellationToken {
    let env = EnvReader::from_pairs([
        ("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}")),
        ("CATALOG_SIZE", "50".to_string()),
    ]);
    let config = storefront_catalog::CatalogConfig::from_env(&env).unwrap();
    let stop = CancellationToken::new();
    let listener = socket.listen(1024).unwrap();
    tokio::spawn(storefront_catalog::serve(config, listener, stop.clone()));
    stop
}

#[tokio::test]
async fn a_failing_downstream_opens_its_circuit_then_recovers() {
    let issuer = issuer().await;
    let (reserved, port) = reserved_port();
    let extra = [("BREAKER_THRESHOLD", "2"), ("BREAKER_OPEN_MS", "300")];
    let (base, stop) = gateway_with(&format!("http://127.0.0.1:{port}"), &issuer.url, &extra).await;
    for _ in 0..2 {
        products(&base).await.0.error(503, "SERVICE_UNAVAILABLE");
    }
    let (open, _) = products(&base).await;
    open.error(503, "CIRCUIT_OPEN");
    assert!(open.body["message"].as_str().unwrap().contains("catalog"));
    let catalog = start_catalog(reserved, &issuer.url).await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let (back, _) = products(&base).await;
    assert_eq!(
        back.status, 200,
        "closed again once the service answers: {}",
        back.body
    );
    catalog.cancel();
    stop.cancel();
}

/// Writes feed the breaker as reads do (they are never retried): a
/// customers service that cannot be reached opens its circuit for logins.
#[tokio::test]
async fn failing_writes_open_the_circuit_too() {
    let issuer = issuer().await;
    let (_reserved, port) = reserved_port();
    let url = format!("http://127.0.0.1:{port}");
    let extra = [("CUSTOMERS_URL", url.as_str()), ("BREAKER_THRESHOLD", "2")];
    let (catalog_unused, _) = reserved_port();
    let catalog = format!("http://{}", catalog_unused.local_addr().unwrap());
    let (base, stop) = gateway_with(&catalog, &issuer.url, &extra).await;
    let login = || {
        let body = serde_json::json!({
            "emailAddress": "ava@example.com", "password": "x", "gRecaptchaResponse": "dev-ok",
        });
        send(
            reqwest::Client::new()
                .post(format!("{base}/auth/login"))
                .header("X-Api-Version", "v1.0")
                .json(&body),
        )
    };
    for _ in 0..2 {
        login().await.error(503, "SERVICE_UNAVAILABLE");
    }
    let open = login().await;
    open.error(503, "CIRCUIT_OPEN");
    assert!(open.body["message"].as_str().unwrap().contains("customers"));
    stop.cancel();
}

#[tokio::test]
async fn a_route_with_its_own_deadline_answers_at_it() {
    let issuer = issuer().await;
    let url = silent_server().await;
    // The channel would wait 30 s; /products may wait 300 ms.
    let extra = [
        ("GRPC_TIMEOUT_MS", "30000"),
        ("ROUTE_TIMEOUTS", "/products=300"),
    ];
    let (base, stop) = gateway_with(&url, &issuer.url, &extra).await;
    let (reply, took) = products(&base).await;
    reply.error(504, "GATEWAY_TIMEOUT");
    assert!(
        took < std::time::Duration::from_secs(10),
        "the route's deadline, not the channel's: {took:?}"
    );
    stop.cancel();
}

#[tokio::test]
async fn deadlines_do_not_open_the_circuit() {
    // One expensive request past its deadline says nothing about the
    // downstream's health: it must not close the route for everyone.
    let issuer = issuer().await;
    let url = silent_server().await;
    let extra = [("BREAKER_THRESHOLD", "2"), ("GRPC_TIMEOUT_MS", "200")];
    let (base, stop) = gateway_with(&url, &issuer.url, &extra).await;
    for _ in 0..4 {
        products(&base).await.0.error(504, "GATEWAY_TIMEOUT");
    }
    stop.cancel();
}

#[tokio::test]
async fn calls_beyond_a_downstream_s_concurrency_are_shed_with_retry_after() {
    let issuer = issuer().await;
    let url = silent_server().await;
    let extra = [("DOWNSTREAM_CONCURRENCY", "2"), ("GRPC_TIMEOUT_MS", "1500")];
    let (base, stop) = gateway_with(&url, &issuer.url, &extra).await;
    let replies = futures::future::join_all((0..6).map(|_| products(&base))).await;
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
            *took < std::time::Duration::from_millis(1_000),
            "shed at once: {took:?}"
        );
    }
    stop.cancel();
}
