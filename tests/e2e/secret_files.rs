//! Issue 50, item 3: Secrets reach the programs as files that they re-read
//! (`<NAME>_FILE`, every `SECRETS_WATCH_SECS`), whatever tool changed them.
//! A rotated signing key signs the next login while tokens signed before
//! still verify; a Redis address naming another server takes the programs
//! out of rotation (the gateway's readiness and the services' gRPC health)
//! and says why, rather than serve from two Redis servers.

use std::path::PathBuf;
use std::time::Duration;

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use reqwest::Method;
use storefront_platform::testing::RedisServer;

use crate::helpers::{Backend, spawn_mesh_on};

fn pem() -> String {
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let der = pair.to_pkcs8v1().unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
    format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n")
}

/// A folder standing in for a mounted Secret.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("secrets-{name}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// As the kubelet updates a mounted Secret: the new file swapped in whole.
fn replace(path: &std::path::Path, text: &str) {
    let next = path.with_extension("next");
    std::fs::write(&next, text).unwrap();
    std::fs::rename(&next, path).unwrap();
}

fn kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

#[tokio::test]
async fn a_rotated_signing_key_signs_the_next_login_and_old_tokens_still_verify() {
    let dir = folder("keys");
    let (current, previous) = (
        dir.join("TOKEN_SIGNING_KEY"),
        dir.join("TOKEN_PREVIOUS_SIGNING_KEY"),
    );
    let (first, spare) = (pem(), pem());
    std::fs::write(&current, &first).unwrap();
    std::fs::write(&previous, &spare).unwrap();
    let vars = [
        ("TOKEN_SIGNING_KEY_FILE", current.to_str().unwrap()),
        (
            "TOKEN_PREVIOUS_SIGNING_KEY_FILE",
            previous.to_str().unwrap(),
        ),
        ("SECRETS_WATCH_SECS", "1"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    let before = t.new_session().await["accessToken"]
        .as_str()
        .unwrap()
        .to_owned();

    // The rotation's second step: a new current key, the old one previous.
    replace(&current, &pem());
    replace(&previous, &first);
    let mut after = String::new();
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        after = t.new_session().await["accessToken"]
            .as_str()
            .unwrap()
            .to_owned();
        if kid(&after) != kid(&before) {
            break;
        }
    }
    assert_ne!(
        kid(&after),
        kid(&before),
        "the new key signs within seconds"
    );
    for token in [&before, &after] {
        let me = t.send(t.authed(Method::GET, "/customers/me", token)).await;
        assert_eq!(me.status, 200, "{}", me.body);
    }

    // A file that is not a key is refused; the last good keys stay.
    replace(&current, "not a key");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let still = t.new_session().await["accessToken"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(kid(&still), kid(&after));
}

#[tokio::test]
async fn a_redis_address_naming_another_server_takes_the_programs_out_of_rotation() {
    let redis = RedisServer::start().expect("redis-server on PATH");
    let other = RedisServer::start().expect("a second redis-server");
    let dir = folder("redis");
    let url = dir.join("REDIS_URL");
    std::fs::write(&url, &redis.url).unwrap();
    let vars = [
        ("REDIS_URL_FILE", url.to_str().unwrap()),
        ("SECRETS_WATCH_SECS", "1"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    let probe = "/health/ready?downstreams=false";
    assert_eq!(t.fetch(probe).await.status, 200);
    let catalog = format!("http://{}", t.mesh.catalog_addr);
    let serving = async || {
        let channel = tonic::transport::Channel::from_shared(catalog.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
        let asked = tonic_health::pb::HealthCheckRequest::default();
        health.check(asked).await.unwrap().into_inner().status
    };
    assert_eq!(serving().await, 1, "SERVING");

    // Credentials alone (the same server): still serving.
    replace(&url, &format!("{}?pass=rotated", redis.url));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(t.fetch(probe).await.status, 200);

    replace(&url, &other.url);
    let mut ready = t.fetch(probe).await;
    for _ in 0..50 {
        if ready.status == 503 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        ready = t.fetch(probe).await;
    }
    let error = ready.error(503, "NOT_READY");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("REDIS_URL now names"), "{message}");
    assert_eq!(serving().await, 2, "NOT_SERVING");
    // Back to the first address: still out, until restarted.
    replace(&url, &redis.url);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(t.fetch(probe).await.status, 503);
}
