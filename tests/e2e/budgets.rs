//! Budgets of accounts, sessions and callers (issue 25): sign-up per
//! client, a login budget a stranger cannot spend for the owner, a session
//! budget that survives its token's refresh, internal callers limited to
//! their routes with maintenance runs spaced out. On both stores.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{Backend, spawn_mesh_on};
use crate::ratelimit::limited;

/// Internal callers are least-privilege by default: fulfilment moves
/// orders and nothing else; ops reindexes and reloads, each at most once
/// per interval, and moves no order.
async fn internal_callers_call_only_their_routes(backend: Backend) {
    let t = spawn_mesh_on(backend, &[]).await;
    let internal = |path: &str| format!("http://{}{path}", t.mesh.internal_addr);
    let mint = |account: &str| t.mesh.issuer.mint(account, "gateway-internal").unwrap();
    let fulfilment = mint("fulfilment@storefront.iam.gserviceaccount.com");
    let ops = mint("ops@storefront.iam.gserviceaccount.com");
    let post = |path: &str, token: &str| {
        t.send(
            t.http
                .request(Method::POST, internal(path))
                .bearer_auth(token),
        )
    };
    for path in ["/internal/search/reindex", "/internal/content/reload"] {
        post(path, &fulfilment).await.error(403, "FORBIDDEN");
    }
    let status = t
        .send(
            t.http
                .request(Method::PUT, internal("/internal/orders/o-1/status"))
                .bearer_auth(&ops)
                .json(&json!({"status": "SHIPPED"})),
        )
        .await;
    status.error(403, "FORBIDDEN");
    assert_eq!(post("/internal/content/reload", &ops).await.status, 200);
    limited(&post("/internal/content/reload", &ops).await, "maintenance");
    assert_eq!(
        post("/internal/search/reindex", &ops).await.status,
        200,
        "each route cools down on its own"
    );
}

/// Sign-up hashes a password: it has a per-IP budget like login's, so no
/// client gets argon2id on demand.
async fn sign_up_has_its_own_budget_per_client(backend: Backend) {
    let vars = [
        ("RATE_LIMIT_SIGNUP", "2/60s"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ];
    let t = spawn_mesh_on(backend, &vars).await;
    let sign_up = |ip: &str| {
        let email = format!("s-{}@example.com", uuid::Uuid::new_v4().simple());
        let body = json!({"emailAddress": email, "password": "correct horse 42", "firstName": "S", "lastName": "U", "gRecaptchaResponse": "x"});
        t.send(
            t.json(Method::POST, "/customers", None, &body)
                .header("X-Forwarded-For", ip.to_string()),
        )
    };
    for _ in 0..2 {
        assert_eq!(sign_up("203.0.113.7").await.status, 202);
    }
    limited(&sign_up("203.0.113.7").await, "signup");
    assert_eq!(
        sign_up("203.0.113.8").await.status,
        202,
        "another client has its own budget"
    );
}

/// A stranger's wrong passwords spend the account's budget for the
/// stranger's network only: the owner, from their own network, still logs
/// in. Past the account's ceiling over all networks, new networks are
/// refused while the owner's usual one still works, and the owner's log
/// gets a notice.
async fn a_stranger_cannot_lock_the_owner_out(backend: Backend) {
    let vars = [
        ("RATE_LIMIT_LOGIN_EMAIL", "3/1h"),
        ("RATE_LIMIT_LOGIN_ACCOUNT", "5/1h"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ];
    let t = spawn_mesh_on(backend, &vars).await;
    let email = format!("owner-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, "correct horse 42").await;
    let login = |password: &str, from: &str| {
        let body = json!({"emailAddress": email, "password": password, "gRecaptchaResponse": "x"});
        t.send(
            t.json(Method::POST, "/auth/login", None, &body)
                .header("X-Forwarded-For", from.to_string()),
        )
    };
    let owner_at_home = "198.51.100.5";
    assert_eq!(login("correct horse 42", owner_at_home).await.status, 200);

    for i in 1..=3 {
        login("guess 1234", &format!("203.0.113.{i}"))
            .await
            .error(401, "INVALID_CREDENTIALS");
    }
    limited(&login("guess 1234", "203.0.113.9").await, "login-email");
    assert_eq!(
        login("correct horse 42", "198.51.100.77").await.status,
        200,
        "the owner's network has its own budget"
    );

    // Two more failures elsewhere reach the ceiling (5 over all networks).
    for i in 1..=2 {
        login("guess 1234", &format!("192.0.2.{i}"))
            .await
            .error(401, "INVALID_CREDENTIALS");
    }
    limited(&login("guess 1234", "192.0.2.3").await, "login-account");
    limited(
        &login("correct horse 42", "233.252.0.1").await,
        "login-account",
    );
    assert_eq!(
        login("correct horse 42", owner_at_home).await.status,
        200,
        "the usual network still gets in"
    );
    let logs = crate::logs::captured();
    assert!(logs.contains("failed logins used up an account's budget"));
    assert!(
        !logs.contains(&email),
        "the notice names a hash, not the address"
    );
}

/// The session budget belongs to the session: a refreshed token spends
/// the same one.
#[tokio::test]
async fn a_stranger_cannot_lock_the_owner_out_in_memory() {
    a_stranger_cannot_lock_the_owner_out(Backend::Memory).await;
}

#[tokio::test]
async fn a_stranger_cannot_lock_the_owner_out_on_redis() {
    a_stranger_cannot_lock_the_owner_out(Backend::Redis).await;
}

async fn a_session_s_budget_survives_its_token_refresh(backend: Backend) {
    let t = spawn_mesh_on(backend, &[("RATE_LIMIT_SESSION", "4/60s")]).await;
    let session = t.new_session().await;
    let first = session["accessToken"].as_str().unwrap().to_string();
    let me = |token: &str| t.send(t.authed(Method::GET, "/customers/me", token));
    for _ in 0..3 {
        assert_eq!(me(&first).await.status, 200);
    }
    let body = json!({"grantType": "refresh_token", "refreshToken": session["refreshToken"]});
    let refreshed = t
        .send(t.json(Method::POST, "/auth/token", None, &body))
        .await;
    assert_eq!(refreshed.status, 200, "{}", refreshed.body);
    let second = refreshed.body["accessToken"].as_str().unwrap().to_string();
    assert_ne!(first, second);
    assert_eq!(me(&second).await.status, 200);
    limited(&me(&second).await, "session");
}

#[tokio::test]
async fn a_session_s_budget_survives_its_token_refresh_in_memory() {
    a_session_s_budget_survives_its_token_refresh(Backend::Memory).await;
}

#[tokio::test]
async fn a_session_s_budget_survives_its_token_refresh_on_redis() {
    a_session_s_budget_survives_its_token_refresh(Backend::Redis).await;
}

#[tokio::test]
async fn internal_callers_call_only_their_routes_and_maintenance_cools_down_in_memory() {
    internal_callers_call_only_their_routes(Backend::Memory).await;
}

#[tokio::test]
async fn internal_callers_call_only_their_routes_and_maintenance_cools_down_on_redis() {
    internal_callers_call_only_their_routes(Backend::Redis).await;
}

#[tokio::test]
async fn sign_up_has_its_own_budget_per_client_in_memory() {
    sign_up_has_its_own_budget_per_client(Backend::Memory).await;
}

#[tokio::test]
async fn sign_up_has_its_own_budget_per_client_on_redis() {
    sign_up_has_its_own_budget_per_client(Backend::Redis).await;
}
