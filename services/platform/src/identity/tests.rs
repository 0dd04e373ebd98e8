//! The token source, the dev issuer and the verifier against each other over
//! real HTTP on loopback.

use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::DEV_ISSUER;
use super::dev_issuer::{DevIssuer, IDENTITY_PATH_PREFIX, JWKS_PATH};
use super::token_source::{TokenOrigin, TokenSource};
use super::verifier::{IdentityVerifier, VerifierConfig, VerifyError};
use super::{Audience, IdentityClaims};

async fn issuer(ttl: Duration) -> (DevIssuer, String, CancellationToken) {
    let issuer = DevIssuer::generate(ttl).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(issuer.clone().serve(listener, stop.clone()));
    (issuer, base, stop)
}

fn identity_url(base: &str, account: &str) -> String {
    format!("{base}{IDENTITY_PATH_PREFIX}/{account}/identity")
}

fn verifier(base: &str, audience: &str, allowed: &str) -> IdentityVerifier {
    IdentityVerifier::new(VerifierConfig {
        issuer: DEV_ISSUER.into(),
        audience: audience.into(),
        jwks_url: format!("{base}{JWKS_PATH}"),
        jwks_ca: None,
        allowed_callers: vec![allowed.into()],
    })
}

fn token_of(bearer: &tonic::metadata::MetadataValue<tonic::metadata::Ascii>) -> String {
    bearer
        .to_str()
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn tokens_are_cached_per_audience_until_shortly_before_expiry() {
    // Long-lived tokens for the cache itself: a loaded machine taking over
    // a second between two calls must not look like expiry.
    let (_issuer, base, _stop) = issuer(Duration::from_secs(3600)).await;
    let source = TokenSource::new(identity_url(&base, "gw@example.iam"));
    let first = source.bearer("catalog").await.unwrap();
    assert!(first.is_sensitive());
    assert_eq!(
        source.bearer("catalog").await.unwrap(),
        first,
        "served from the cache"
    );
    let other = source.bearer("orders").await.unwrap();
    assert_ne!(other, first, "one token per audience");
    // A 2 s token is replaced after half its life (the margin is capped at
    // ttl / 2): after 2.1 s it has been, however slow the machine.
    let (_short, base, _stop_short) = issuer(Duration::from_secs(2)).await;
    let source = TokenSource::new(identity_url(&base, "gw@example.iam"));
    let first = source.bearer("catalog").await.unwrap();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_ne!(source.bearer("catalog").await.unwrap(), first);
}

#[tokio::test]
async fn fetched_tokens_verify_for_their_audience_and_caller() {
    let (_issuer, base, _stop) = issuer(Duration::from_secs(600)).await;
    let source = TokenSource::new(identity_url(&base, "gw@example.iam"));
    let token = token_of(&source.bearer("catalog").await.unwrap());
    let caller = verifier(&base, "catalog", "gw@example.iam")
        .verify(&token, "GetProduct")
        .await
        .unwrap();
    assert_eq!(caller.account, "gw@example.iam");
    let wrong_audience = verifier(&base, "orders", "gw@example.iam")
        .verify(&token, "GetProduct")
        .await;
    assert!(matches!(
        wrong_audience,
        Err(VerifyError::Unauthenticated(_))
    ));
    let not_allowed = verifier(&base, "catalog", "other@example.iam")
        .verify(&token, "GetProduct")
        .await;
    assert!(matches!(not_allowed, Err(VerifyError::PermissionDenied(_))));
    // An account named with methods may call those and no others.
    let narrow = verifier(&base, "catalog", "gw@example.iam=GetProduct|ExportProducts");
    assert!(narrow.verify(&token, "ExportProducts").await.is_ok());
    assert!(matches!(
        narrow.verify(&token, "UpdateProduct").await,
        Err(VerifyError::PermissionDenied(_))
    ));
}

#[test]
fn allow_list_entries_parse_or_name_the_bad_one() {
    use crate::identity::verifier::Allowed;
    let allowed = Allowed::parse(&["a@x".into(), "b@x=Get|List".into()]).unwrap();
    assert!(allowed.permits("a@x", "Anything"));
    assert!(allowed.permits("b@x", "List") && !allowed.permits("b@x", "Update"));
    assert!(!allowed.permits("c@x", "Get"));
    for bad in ["=Get", "b@x=Get||List", "b@x="] {
        assert!(Allowed::parse(&[bad.into()]).is_err(), "{bad}");
    }
}

#[tokio::test]
async fn the_metadata_endpoint_insists_on_its_header_and_an_audience() {
    let (_issuer, base, _stop) = issuer(Duration::from_secs(60)).await;
    let http = reqwest::Client::new();
    let url = identity_url(&base, "gw@example.iam");
    let without = http
        .get(&url)
        .query(&[("audience", "catalog")])
        .send()
        .await
        .unwrap();
    assert_eq!(without.status(), 403);
    let no_audience = http
        .get(&url)
        .header("Metadata-Flavor", "Google")
        .send()
        .await
        .unwrap();
    assert_eq!(no_audience.status(), 400);
}

#[tokio::test]
async fn an_unreachable_issuer_is_unavailable_not_unauthenticated() {
    let (issuer, base, stop) = issuer(Duration::from_secs(60)).await;
    let token = issuer.mint("gw@example.iam", "catalog").unwrap();
    stop.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let v = verifier(&base, "catalog", "gw@example.iam");
    assert!(matches!(
        v.verify(&token, "GetProduct").await,
        Err(VerifyError::Unavailable(_))
    ));
    // Within the back-off the verifier answers from what it knows.
    assert!(matches!(
        v.verify(&token, "GetProduct").await,
        Err(VerifyError::Unavailable(_))
    ));
}

#[tokio::test]
async fn a_token_not_yet_valid_is_refused_and_a_verified_one_is_remembered() {
    let (issuer, base, _stop) = issuer(Duration::from_secs(600)).await;
    let verifier = verifier(&base, "catalog", "gw@example.iam");
    let mut early = issuer.claims("gw@example.iam", "catalog");
    early.nbf = Some(early.iat + 3600);
    let early = issuer.mint_claims(&early).unwrap();
    assert!(matches!(
        verifier.verify(&early, "GetProduct").await,
        Err(VerifyError::Unauthenticated(_))
    ));
    // Refused again: a refusal is never remembered as a success.
    assert!(verifier.verify(&early, "GetProduct").await.is_err());
    let good = issuer.mint("gw@example.iam", "catalog").unwrap();
    for _ in 0..3 {
        assert_eq!(
            verifier.verify(&good, "GetProduct").await.unwrap().account,
            "gw@example.iam"
        );
    }
    // An expired token is refused even after a verified one was remembered.
    let mut old = issuer.claims("gw@example.iam", "catalog");
    old.exp = old.iat - 3600;
    let old = issuer.mint_claims(&old).unwrap();
    assert!(verifier.verify(&old, "GetProduct").await.is_err());
}

/// Kubernetes projected service-account tokens (any cluster): one file per
/// audience, `aud` a list, no `email` (the caller is its `sub`); the file
/// is read again once the token is near its expiry (the kubelet renewed
/// it by then), and no audience names a file outside the directory.
#[tokio::test]
async fn projected_token_files_verify_as_their_service_account() {
    let (issuer, base, _stop) = issuer(Duration::from_secs(600)).await;
    let account = "system:serviceaccount:shop:storefront-gateway";
    let projected = |audience: &str, ttl: u64| {
        let now = jsonwebtoken::get_current_timestamp();
        issuer
            .mint_claims(&IdentityClaims {
                iss: DEV_ISSUER.into(),
                aud: Audience::Many(vec![audience.into()]),
                sub: account.into(),
                email: None,
                iat: now,
                exp: now + ttl,
                nbf: Some(now),
            })
            .unwrap()
    };
    let dir = std::env::temp_dir().join(format!("projected-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("catalog"), projected("catalog", 2) + "\n").unwrap();
    let source = TokenSource::new(TokenOrigin::Files(dir.clone()));
    let first = token_of(&source.bearer("catalog").await.unwrap());
    let caller = verifier(&base, "catalog", account)
        .verify(&first, "GetProduct")
        .await
        .unwrap();
    assert_eq!(caller.account, account);
    assert!(matches!(
        verifier(&base, "orders", account)
            .verify(&first, "GetProduct")
            .await,
        Err(VerifyError::Unauthenticated(_))
    ));
    // Renewed on disk: read again after half the 2 s token's life.
    std::fs::write(dir.join("catalog"), projected("catalog", 600)).unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_ne!(token_of(&source.bearer("catalog").await.unwrap()), first);
    for bad in ["orders", "../catalog", ".hidden", ""] {
        let err = source.bearer(bad).await.unwrap_err().to_string();
        assert!(err.contains("identity token unavailable"), "{bad}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
