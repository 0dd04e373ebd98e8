//! Sessions and the tokens that carry them: refresh rotation, reuse,
//! logout, concurrency, a JWT attack suite, and secrets kept out of logs.

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::Method;
use serde_json::{Value, json};

use storefront_domain::customer_token::low_s;

use crate::both_backends;
use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::logs;

async fn refresh(t: &TestMesh, refresh_token: &str) -> crate::helpers::Reply {
    let body = json!({"grantType": "refresh_token", "refreshToken": refresh_token});
    t.send(t.json(Method::POST, "/auth/token", None, &body))
        .await
}

async fn me(t: &TestMesh, token: &str) -> crate::helpers::Reply {
    t.send(t.authed(Method::GET, "/customers/me", token)).await
}

fn field(v: &Value, name: &str) -> String {
    v[name].as_str().unwrap().to_string()
}

async fn rotation_reuse_and_logout(t: TestMesh) {
    let first = t.new_session().await;
    let second = refresh(&t, &field(&first, "refreshToken")).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_ne!(
        field(&second.body, "refreshToken"),
        field(&first, "refreshToken"),
        "rotated"
    );
    assert_eq!(
        me(&t, &field(&second.body, "accessToken")).await.status,
        200
    );

    // Presenting the used token again revokes the whole session.
    let replay = refresh(&t, &field(&first, "refreshToken")).await;
    replay.error(401, "REFRESH_TOKEN_REUSED");
    assert_eq!(replay.body["type"], "auth_error");
    refresh(&t, &field(&second.body, "refreshToken"))
        .await
        .error(401, "SESSION_REVOKED");
    me(&t, &field(&second.body, "accessToken"))
        .await
        .error(401, "TOKEN_REVOKED");
    me(&t, &field(&first, "accessToken"))
        .await
        .error(401, "TOKEN_REVOKED");

    // Logout ends a session at once: its access token and refresh token.
    let session = t.new_session().await;
    let access = field(&session, "accessToken");
    let out = t
        .send(t.authed(Method::POST, "/auth/logout", &access))
        .await;
    assert_eq!(out.status, 204);
    me(&t, &access).await.error(401, "TOKEN_REVOKED");
    refresh(&t, &field(&session, "refreshToken"))
        .await
        .error(401, "SESSION_REVOKED");
    t.send(t.authed(Method::POST, "/auth/logout", &access))
        .await
        .error(401, "TOKEN_REVOKED");
}
both_backends!(refresh_rotation_reuse_and_logout, rotation_reuse_and_logout);

/// A shopper whose 15-minute access token has expired still ends the
/// 30-day session with the refresh token alone.
async fn logout_by_refresh_token(t: TestMesh) {
    let session = t.new_session().await;
    let body = json!({"refreshToken": field(&session, "refreshToken")});
    let out = t
        .send(t.json(Method::POST, "/auth/logout", None, &body))
        .await;
    assert_eq!(out.status, 204, "{}", out.body);
    refresh(&t, &field(&session, "refreshToken"))
        .await
        .error(401, "SESSION_REVOKED");
    me(&t, &field(&session, "accessToken"))
        .await
        .error(401, "TOKEN_REVOKED");
    let unknown = json!({"refreshToken": "not-a-refresh-token"});
    t.send(t.json(Method::POST, "/auth/logout", None, &unknown))
        .await
        .error(401, "INVALID_REFRESH_TOKEN");
    // Neither an access token nor a refresh token: 401 as before.
    let none = t
        .send(t.json(Method::POST, "/auth/logout", None, &json!({})))
        .await;
    assert_eq!(none.status, 401, "{}", none.body);
    // Both at once end both sessions.
    let first = t.new_session().await;
    let second = t.new_session().await;
    let body = json!({"refreshToken": field(&second, "refreshToken")});
    let out = t
        .send(t.json(
            Method::POST,
            "/auth/logout",
            Some(&field(&first, "accessToken")),
            &body,
        ))
        .await;
    assert_eq!(out.status, 204, "{}", out.body);
    for s in [&first, &second] {
        refresh(&t, &field(s, "refreshToken"))
            .await
            .error(401, "SESSION_REVOKED");
    }
}
both_backends!(logout_by_refresh_token_alone, logout_by_refresh_token);

async fn concurrent_refreshes(t: TestMesh) {
    let session = t.new_session().await;
    let token = field(&session, "refreshToken");
    let replies = futures::future::join_all((0..16).map(|_| refresh(&t, &token))).await;
    let winners: Vec<_> = replies.iter().filter(|r| r.status == 200).collect();
    assert!(winners.len() <= 1, "at most one exchange succeeds");
    assert!(replies.iter().filter(|r| r.status == 401).count() >= 15);
    // The race revoked the family: whatever the winner got is dead too.
    for w in winners {
        refresh(&t, &field(&w.body, "refreshToken"))
            .await
            .error(401, "SESSION_REVOKED");
        me(&t, &field(&w.body, "accessToken"))
            .await
            .error(401, "TOKEN_REVOKED");
    }
}
both_backends!(
    sixteen_concurrent_refreshes_at_most_one_wins,
    concurrent_refreshes
);

/// A P-256 key as PKCS#8 PEM, and its kid as the service computes it.
pub fn signing_key() -> (String, EncodingKey, String) {
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let der = pair.to_pkcs8v1().unwrap();
    let body = STANDARD.encode(der.as_ref());
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    let key = EncodingKey::from_ec_pem(pem.as_bytes()).unwrap();
    let kid = Jwk::from_encoding_key(&key, Algorithm::ES256)
        .unwrap()
        .thumbprint(ThumbprintHash::SHA256)
        .unwrap();
    (pem, key, kid)
}

fn sign(claims: &Value, key: &EncodingKey, kid: &str) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_string());
    low_s::normalise(jsonwebtoken::encode(&header, claims, key).unwrap())
}

#[tokio::test]
async fn forged_and_mangled_tokens_are_401_auth_errors() {
    let (pem, key, kid) = signing_key();
    let t = spawn_mesh_on(Backend::Memory, &[("TOKEN_SIGNING_KEY", pem.as_str())]).await;
    let session = t.new_session().await;
    let valid = field(&session, "accessToken");
    assert_eq!(me(&t, &valid).await.status, 200);
    let claims: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(valid.split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    let now = jsonwebtoken::get_current_timestamp();
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut c = claims.clone();
        edit(&mut c);
        sign(&c, &key, &kid)
    };
    // The same claims, re-signed by the real key, are fine: the cases below
    // fail for their own reason only.
    assert_eq!(me(&t, &with(&|_| {})).await.status, 200);

    let (_, stranger, stranger_kid) = signing_key();
    let header_b64 = |h: Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(&h).unwrap());
    let payload = valid.split('.').nth(1).unwrap().to_string();
    let signature = valid.split('.').nth(2).unwrap().to_string();
    let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
    let public_x = match jwk.algorithm {
        jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(ec) => ec.x,
        _ => unreachable!(),
    };
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some(kid.clone());
    let hs256 =
        jsonwebtoken::encode(&hs, &claims, &EncodingKey::from_secret(public_x.as_bytes())).unwrap();
    let tampered_claims = URL_SAFE_NO_PAD.encode(
        serde_json::to_vec(&{
            let mut c = claims.clone();
            c["sub"] = json!("someone-else");
            c
        })
        .unwrap(),
    );

    let cases: Vec<(&str, String, &str)> = vec![
        (
            "alg none",
            format!(
                "{}.{payload}.",
                header_b64(json!({"alg": "none", "typ": "JWT"}))
            ),
            "INVALID_TOKEN",
        ),
        ("HS256 keyed with the public key", hs256, "INVALID_TOKEN"),
        (
            "the same signature's other form (r, n - s)",
            low_s::flip(&valid),
            "INVALID_TOKEN",
        ),
        (
            "expired",
            with(&|c| {
                c["iat"] = json!(now - 7200);
                c["exp"] = json!(now - 3600);
            }),
            "TOKEN_EXPIRED",
        ),
        (
            "not yet valid",
            with(&|c| c["nbf"] = json!(now + 3600)),
            "INVALID_TOKEN",
        ),
        (
            "wrong issuer",
            with(&|c| c["iss"] = json!("https://evil.example")),
            "INVALID_TOKEN",
        ),
        (
            "wrong audience",
            with(&|c| c["aud"] = json!("another-api")),
            "INVALID_TOKEN",
        ),
        (
            "no expiry",
            with(&|c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            "INVALID_TOKEN",
        ),
        (
            "unknown kid",
            sign(&claims, &stranger, &stranger_kid),
            "INVALID_TOKEN",
        ),
        (
            "right kid, wrong key",
            sign(&claims, &stranger, &kid),
            "INVALID_TOKEN",
        ),
        (
            "tampered payload",
            format!(
                "{}.{tampered_claims}.{signature}",
                valid.split('.').next().unwrap()
            ),
            "INVALID_TOKEN",
        ),
        ("garbage", "not-a-token".to_string(), "INVALID_TOKEN"),
    ];
    for (name, token, code) in cases {
        let reply = me(&t, &token).await;
        assert_eq!(reply.status, 401, "{name}: {}", reply.body);
        assert_eq!(reply.body["type"], "auth_error", "{name}");
        assert_eq!(reply.body["code"], code, "{name}");
    }
}

#[tokio::test]
async fn passwords_tokens_and_hashes_never_reach_the_logs() {
    let t = spawn_mesh_on(Backend::Memory, &[]).await;
    let email = format!("secretive-{}@example.com", uuid::Uuid::new_v4().simple());
    let password = format!("Sup3r-secret-{}", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, &password).await;
    t.log_in(&email, "wrong password 1")
        .await
        .error(401, "INVALID_CREDENTIALS");
    let session = t.log_in(&email, &password).await.body;
    let renewed = refresh(&t, &field(&session, "refreshToken")).await.body;
    refresh(&t, &field(&session, "refreshToken"))
        .await
        .error(401, "REFRESH_TOKEN_REUSED");
    t.send(t.authed(
        Method::POST,
        "/auth/logout",
        &field(&renewed, "accessToken"),
    ))
    .await;

    let logs = logs::captured();
    assert!(
        logs.contains("customer signed up"),
        "the capture sees this mesh's logs"
    );
    for secret in [
        password.as_str(),
        "wrong password 1",
        field(&session, "accessToken").as_str(),
        field(&session, "refreshToken").as_str(),
        field(&renewed, "accessToken").as_str(),
        field(&renewed, "refreshToken").as_str(),
        "$argon2id$",
    ] {
        assert!(!logs.contains(secret), "a secret reached the logs");
    }
}
