//! Rate limits: exact budgets per scope, X-Forwarded-For believed only from
//! trusted proxies, honest Retry-After, budgets shared through Redis.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, Reply, TestMesh, spawn_mesh_on};

async fn products(t: &TestMesh, xff: Option<&str>) -> Reply {
    let mut request = t.get("/products?limit=1");
    if let Some(ip) = xff {
        request = request.header("X-Forwarded-For", ip);
    }
    t.send(request).await
}

pub fn limited(reply: &Reply, scope: &str) {
    reply.error(429, "RATE_LIMIT_EXCEEDED");
    assert_eq!(reply.body["type"], "rate_limit_error");
    let retry: u64 = reply
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("whole seconds");
    assert!(retry >= 1);
    let policy = reply.header("ratelimit-policy").unwrap();
    assert!(
        policy.contains(&format!("\"{scope}\"")),
        "{scope}: {policy}"
    );
}

#[tokio::test]
async fn the_ip_budget_holds_exactly_and_spoofed_forwarding_is_ignored() {
    let t = spawn_mesh_on(Backend::Memory, &[("RATE_LIMIT_IP", "5/60s")]).await;
    for expected in (0..5).rev() {
        let reply = products(&t, Some(&format!("203.0.113.{expected}"))).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("ratelimit-policy"), Some("\"ip\";q=5;w=60"));
        assert!(
            reply
                .header("ratelimit")
                .unwrap()
                .starts_with(&format!("\"ip\";r={expected};")),
            "{:?}",
            reply.header("ratelimit")
        );
    }
    // The peer (127.0.0.1) is not a trusted proxy: its X-Forwarded-For changes nothing.
    limited(&products(&t, Some("198.51.100.7")).await, "ip");
    let health = t.send(t.request(Method::GET, "/health/live")).await;
    assert_eq!(health.status, 200, "probes are never limited");
}

#[tokio::test]
async fn trusted_proxies_forward_distinct_clients() {
    let t = spawn_mesh_on(
        Backend::Memory,
        &[("RATE_LIMIT_IP", "2/60s"), ("TRUSTED_PROXIES", "127.0.0.1")],
    )
    .await;
    for _ in 0..2 {
        assert_eq!(products(&t, Some("203.0.113.1")).await.status, 200);
    }
    limited(&products(&t, Some("203.0.113.1")).await, "ip");
    assert_eq!(
        products(&t, Some("203.0.113.2")).await.status,
        200,
        "another client has its own budget"
    );
    // A client cannot pick its address by prepending to the header.
    limited(&products(&t, Some("192.0.2.99, 203.0.113.1")).await, "ip");
}

#[tokio::test]
async fn search_and_login_have_stricter_budgets() {
    let vars = [
        ("RATE_LIMIT_SEARCH", "2/60s"),
        ("RATE_LIMIT_LOGIN_EMAIL", "3/1h"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    for _ in 0..2 {
        assert_eq!(t.fetch("/search?query=shirt").await.status, 200);
    }
    limited(&t.fetch("/search?query=shirt").await, "search");
    assert_eq!(
        products(&t, None).await.status,
        200,
        "other routes keep their own budget"
    );

    let body = json!({"emailAddress": "Ava@Example.com", "password": "guess 1234", "gRecaptchaResponse": "x"});
    for i in 0..3 {
        let reply = t
            .send(
                t.json(Method::POST, "/auth/login", None, &body)
                    .header("X-Forwarded-For", format!("203.0.113.{i}")),
            )
            .await;
        reply.error(401, "INVALID_CREDENTIALS");
    }
    let blocked = t
        .send(
            t.json(Method::POST, "/auth/login", None, &body)
                .header("X-Forwarded-For", "203.0.113.50"),
        )
        .await;
    limited(&blocked, "login-email");
}

#[tokio::test]
async fn retry_after_is_honest() {
    let t = spawn_mesh_on(Backend::Memory, &[("RATE_LIMIT_IP", "2/2s")]).await;
    products(&t, None).await;
    products(&t, None).await;
    let denied = products(&t, None).await;
    limited(&denied, "ip");
    let wait: u64 = denied.header("retry-after").unwrap().parse().unwrap();
    tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
    assert_eq!(
        products(&t, None).await.status,
        200,
        "a request after Retry-After succeeds"
    );
}

#[tokio::test]
async fn two_gateways_share_one_budget_through_redis() {
    let a = spawn_mesh_on(Backend::Redis, &[("RATE_LIMIT_IP", "4/60s")]).await;
    let url = a._redis.as_ref().unwrap().url.clone();
    let b = spawn_mesh_on(
        Backend::Memory,
        &[("RATE_LIMIT_IP", "4/60s"), ("REDIS_URL", url.as_str())],
    )
    .await;
    assert_eq!(products(&a, None).await.status, 200);
    assert_eq!(products(&b, None).await.status, 200);
    assert_eq!(products(&a, None).await.status, 200);
    let last = products(&b, None).await;
    assert_eq!(last.status, 200);
    assert!(last.header("ratelimit").unwrap().starts_with("\"ip\";r=0;"));
    limited(&products(&a, None).await, "ip");
    limited(&products(&b, None).await, "ip");
}

#[tokio::test]
async fn with_redis_gone_open_scopes_serve_and_closed_ones_refuse() {
    let mut t = spawn_mesh_on(Backend::Redis, &[]).await;
    assert_eq!(products(&t, None).await.status, 200);
    drop(t._redis.take());
    // The ip scope fails open: the catalog, which needs no Redis, still answers.
    let reply = products(&t, None).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    // Login fails closed: guessing is not waved through while limits are blind.
    let body = json!({"emailAddress": "ava@example.com", "password": "guess 1234", "gRecaptchaResponse": "x"});
    let login = t
        .send(t.json(Method::POST, "/auth/login", None, &body))
        .await;
    login.error(503, "RATE_LIMITER_UNAVAILABLE");
    assert_eq!(login.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn each_service_account_has_its_own_budget_on_the_internal_port() {
    let t = spawn_mesh_on(Backend::Memory, &[("RATE_LIMIT_SERVICE", "2/60s")]).await;
    let url = format!(
        "http://{}/internal/orders/no-such-order/status",
        t.mesh.internal_addr
    );
    let mint = |account: &str| t.mesh.issuer.mint(account, "gateway-internal").unwrap();
    let fulfilment = mint("fulfilment@storefront.iam.gserviceaccount.com");
    let set = |token: &str| {
        t.send(
            t.http
                .request(Method::PUT, &url)
                .bearer_auth(token)
                .json(&json!({"status": "SHIPPED"})),
        )
    };
    for _ in 0..2 {
        set(&fulfilment).await.error(404, "NOT_FOUND");
    }
    limited(&set(&fulfilment).await, "service");
    let reload = format!("http://{}/internal/content/reload", t.mesh.internal_addr);
    let ops = mint("ops@storefront.iam.gserviceaccount.com");
    assert_eq!(
        t.send(t.http.request(Method::POST, &reload).bearer_auth(&ops))
            .await
            .status,
        200,
        "another account has its own budget"
    );
}

/// Only failed password checks spend an account's login budget: a
/// stranger's malformed logins cannot lock its owner out.
async fn malformed_logins_never_lock_the_owner_out(backend: Backend) {
    let vars = [
        ("RATE_LIMIT_LOGIN_EMAIL", "3/1h"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ];
    let t = spawn_mesh_on(backend, &vars).await;
    let email = format!("owner-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let login = |body: serde_json::Value, i: usize| {
        t.json(Method::POST, "/auth/login", None, &body)
            .header("X-Forwarded-For", format!("198.51.100.{i}"))
    };
    let shouted = format!("  {}  ", email.to_uppercase());
    for i in 0..11 {
        let reply = t.send(login(json!({ "emailAddress": shouted }), i)).await;
        reply.error(422, "VALIDATION_ERROR");
    }
    let huge = format!("{}@example.com", "a".repeat(300));
    let reply = t
        .send(login(json!({"emailAddress": huge, "password": "x"}), 20))
        .await;
    reply.error(422, "VALIDATION_ERROR");
    assert_eq!(reply.field_error(), ("emailAddress", "TOO_LONG"));
    assert_eq!(t.log_in(&email, "correct horse 42").await.status, 200);

    // Wrong passwords (under any spelling of the address) do count.
    let wrong = json!({"emailAddress": shouted, "password": "wrong horse 42", "gRecaptchaResponse": "dev-ok"});
    for i in 30..33 {
        t.send(login(wrong.clone(), i))
            .await
            .error(401, "INVALID_CREDENTIALS");
    }
    let right = json!({"emailAddress": email, "password": "correct horse 42", "gRecaptchaResponse": "dev-ok"});
    limited(&t.send(login(right, 40)).await, "login-email");
}

#[tokio::test]
async fn failed_password_checks_alone_spend_the_login_budget_in_memory() {
    malformed_logins_never_lock_the_owner_out(Backend::Memory).await;
}

#[tokio::test]
async fn failed_password_checks_alone_spend_the_login_budget_on_redis() {
    malformed_logins_never_lock_the_owner_out(Backend::Redis).await;
}
