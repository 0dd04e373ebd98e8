//! A storefront on its own origin: CORS preflights are answered before the
//! version check, rate limits and authentication; allowed origins read the
//! headers they need; others get no CORS headers at all.

use reqwest::Method;

use crate::helpers::spawn_mesh_with;

const SHOP: &str = "https://shop.example.com";

#[tokio::test]
async fn a_shop_on_its_own_origin_may_call_and_others_may_not() {
    let t = spawn_mesh_with(&[("CORS_ALLOWED_ORIGINS", SHOP), ("RATE_LIMIT_IP", "2/60s")]).await;
    let preflight = |origin: &str| {
        t.request(Method::OPTIONS, "/carts")
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "content-type,x-bff-token,x-api-version",
            )
    };
    // More preflights than the IP budget allows: none is limited, none
    // needs a version header or a token.
    for _ in 0..4 {
        let reply = t.send(preflight(SHOP)).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.header("access-control-allow-origin"), Some(SHOP));
        let allowed = reply.header("access-control-allow-headers").unwrap();
        for h in [
            "content-type",
            "x-bff-token",
            "x-api-version",
            "idempotency-key",
        ] {
            assert!(allowed.contains(h), "{h} in {allowed}");
        }
        assert!(
            reply
                .header("access-control-allow-methods")
                .unwrap()
                .contains("POST")
        );
        assert_eq!(reply.header("access-control-max-age"), Some("600"));
        assert!(reply.header("access-control-allow-credentials").is_none());
        assert!(
            reply
                .header("vary")
                .unwrap()
                .to_lowercase()
                .contains("origin")
        );
    }
    let stranger = t.send(preflight("https://evil.example.net")).await;
    assert!(
        stranger.header("access-control-allow-origin").is_none(),
        "a disallowed origin gets no CORS headers"
    );

    // An actual call: the shop's script may read what it needs.
    let t2 = spawn_mesh_with(&[("CORS_ALLOWED_ORIGINS", SHOP)]).await;
    let reply = t2
        .send(t2.get("/products?limit=1").header("Origin", SHOP))
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("access-control-allow-origin"), Some(SHOP));
    let exposed = reply.header("access-control-expose-headers").unwrap();
    for h in [
        "correlation-id",
        "x-api-version",
        "etag",
        "retry-after",
        "ratelimit-policy",
    ] {
        assert!(exposed.contains(h), "{h} in {exposed}");
    }
    // Errors carry them too, so a script can read the error body.
    let error = t2
        .send(t2.request(Method::GET, "/products").header("Origin", SHOP))
        .await;
    error.error(400, "INVALID_API_VERSION");
    assert_eq!(error.header("access-control-allow-origin"), Some(SHOP));
}

#[tokio::test]
async fn with_every_limit_off_no_empty_rate_limit_header_is_sent() {
    let off = [
        ("RATE_LIMIT_IP", "off"),
        ("RATE_LIMIT_SESSION", "off"),
        ("RATE_LIMIT_SEARCH", "off"),
        ("RATE_LIMIT_LOGIN", "off"),
        ("RATE_LIMIT_LOGIN_EMAIL", "off"),
    ];
    let t = spawn_mesh_with(&off).await;
    for path in ["/products?limit=1", "/categories", "/search?query=shirt"] {
        let reply = t.fetch(path).await;
        assert_eq!(reply.status, 200);
        assert!(reply.header("ratelimit-policy").is_none(), "{path}");
        for (name, value) in &reply.headers {
            assert!(!value.is_empty(), "{path}: empty {name}");
        }
    }
}
