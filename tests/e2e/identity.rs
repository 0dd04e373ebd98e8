//! Every gRPC call but health needs an identity token from the issuer, for
//! this service, from an allowed caller.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use storefront_platform::settings::DEV_GATEWAY_ACCOUNT;
use storefront_platform::topology;
use storefront_proto::catalog::v1::ListCategoriesRequest;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use tonic::Code;
use tonic::transport::Channel;

use crate::helpers::{TestMesh, spawn_mesh};

async fn client(t: &TestMesh) -> CatalogServiceClient<Channel> {
    CatalogServiceClient::connect(format!("http://{}", t.mesh.catalog_addr))
        .await
        .expect("connect")
}

async fn call(t: &TestMesh, authorization: Option<String>) -> Result<(), tonic::Status> {
    let mut request = tonic::Request::new(ListCategoriesRequest::default());
    if let Some(value) = authorization {
        request
            .metadata_mut()
            .insert("authorization", value.parse().unwrap());
    }
    client(t).await.list_categories(request).await.map(|_| ())
}

fn bearer(token: &str) -> Option<String> {
    Some(format!("Bearer {token}"))
}

/// Re-encodes a token's payload without re-signing it.
fn tamper(token: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let mut claims: serde_json::Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    edit(&mut claims);
    let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims).unwrap());
    format!("{}.{payload}.{}", parts[0], parts[2])
}

#[tokio::test]
async fn an_allowed_caller_with_a_valid_token_gets_through() {
    let t = spawn_mesh().await;
    let token = t.mesh.issuer.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap();
    call(&t, bearer(&token)).await.expect("allowed");
}

#[tokio::test]
async fn missing_or_unusable_tokens_are_unauthenticated() {
    let t = spawn_mesh().await;
    let issuer = &t.mesh.issuer;
    let valid = issuer.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap();
    let mut expired = issuer.claims(DEV_GATEWAY_ACCOUNT, "catalog");
    expired.iat -= 7200;
    expired.exp = expired.iat + 60;
    let mut wrong_issuer = issuer.claims(DEV_GATEWAY_ACCOUNT, "catalog");
    wrong_issuer.iss = "https://accounts.example.com".into();
    let stranger = storefront_platform::identity::dev_issuer::DevIssuer::generate(
        std::time::Duration::from_secs(60),
    )
    .unwrap();
    let header_none = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
    let payload = valid.split('.').nth(1).unwrap();
    let n = match &issuer.jwks().keys[0].algorithm {
        jsonwebtoken::jwk::AlgorithmParameters::RSA(rsa) => rsa.n.clone(),
        _ => unreachable!(),
    };
    let mut hs_header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    hs_header.kid = jsonwebtoken::decode_header(&valid).unwrap().kid;
    let hs256 = jsonwebtoken::encode(
        &hs_header,
        &issuer.claims(DEV_GATEWAY_ACCOUNT, "catalog"),
        &jsonwebtoken::EncodingKey::from_secret(n.as_bytes()),
    )
    .unwrap();

    let cases: Vec<(&str, Option<String>)> = vec![
        ("no header", None),
        ("not bearer", Some(format!("Basic {valid}"))),
        ("garbage", bearer("not.a.jwt")),
        (
            "wrong audience",
            bearer(&issuer.mint(DEV_GATEWAY_ACCOUNT, "orders").unwrap()),
        ),
        ("expired", bearer(&issuer.mint_claims(&expired).unwrap())),
        (
            "wrong issuer",
            bearer(&issuer.mint_claims(&wrong_issuer).unwrap()),
        ),
        (
            "unknown key",
            bearer(&stranger.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap()),
        ),
        ("alg none", bearer(&format!("{header_none}.{payload}."))),
        ("hs256 with the public key", bearer(&hs256)),
        (
            "tampered payload",
            bearer(&tamper(&valid, |c| {
                c["exp"] = (c["exp"].as_u64().unwrap() + 86_400).into()
            })),
        ),
    ];
    for (name, authorization) in cases {
        let status = call(&t, authorization).await.expect_err(name);
        assert_eq!(status.code(), Code::Unauthenticated, "{name}: {status:?}");
    }
}

#[tokio::test]
async fn a_caller_off_the_allow_list_is_denied() {
    let t = spawn_mesh().await;
    let token = t
        .mesh
        .issuer
        .mint("intruder@storefront.iam.gserviceaccount.com", "catalog")
        .unwrap();
    let status = call(&t, bearer(&token)).await.expect_err("denied");
    assert_eq!(status.code(), Code::PermissionDenied);
    // The tampered claim cannot smuggle an allowed account in.
    let forged = tamper(&token, |c| c["email"] = DEV_GATEWAY_ACCOUNT.into());
    assert_eq!(
        call(&t, bearer(&forged)).await.unwrap_err().code(),
        Code::Unauthenticated
    );
}

#[tokio::test]
async fn health_needs_no_token() {
    let t = spawn_mesh().await;
    let channel = Channel::from_shared(format!("http://{}", t.mesh.catalog_addr))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let reply = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "storefront.catalog.v1.CatalogService".into(),
        })
        .await
        .expect("health without a token");
    assert_eq!(
        reply.into_inner().status(),
        tonic_health::pb::health_check_response::ServingStatus::Serving
    );
}

#[tokio::test]
async fn verified_keys_outlive_a_brief_issuer_outage() {
    let mut t = spawn_mesh().await;
    let token = t.mesh.issuer.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap();
    call(&t, bearer(&token)).await.expect("keys fetched");
    t.mesh.stop("issuer").await.expect("issuer stops");
    call(&t, bearer(&token))
        .await
        .expect("cached keys still verify");
    // A key the service never saw cannot be checked while the issuer is away.
    let stranger = storefront_platform::identity::dev_issuer::DevIssuer::generate(
        std::time::Duration::from_secs(60),
    )
    .unwrap();
    let status = call(
        &t,
        bearer(&stranger.mint(DEV_GATEWAY_ACCOUNT, "catalog").unwrap()),
    )
    .await
    .unwrap_err();
    assert_eq!(status.code(), Code::Unauthenticated);
}

#[tokio::test]
async fn a_service_may_call_only_the_methods_it_uses() {
    use storefront_proto::catalog::v1::{ListChangesRequest, UpdateProductRequest};
    let t = spawn_mesh().await;
    let mut client = CatalogServiceClient::connect(format!("http://{}", t.mesh.catalog_addr))
        .await
        .unwrap();
    let token = t
        .mesh
        .issuer
        .mint(topology::SEARCH.dev_account, "catalog")
        .unwrap();
    fn authed<T>(message: T, token: &str) -> tonic::Request<T> {
        let mut r = tonic::Request::new(message);
        r.metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        r
    }
    let changes = client
        .list_changes(authed(ListChangesRequest { since_version: 1 }, &token))
        .await;
    assert!(changes.is_ok(), "search reads what it follows: {changes:?}");
    let update = UpdateProductRequest {
        product_id: "any".into(),
        ..Default::default()
    };
    let refused = client
        .update_product(authed(update, &token))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
}
