//! Customer tokens: short-lived ES256 access JWTs with a `kid`, and opaque
//! refresh tokens stored only as their SHA-256.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use storefront_domain::customer_token::{CustomerClaims, GUEST_SCOPE, low_s};
use storefront_platform::env::Secret;
use storefront_platform::error::ServiceError;
use storefront_platform::secret_files::{Followed, Swap};
use storefront_proto::customers::v1::{SigningKey, SigningKeys};

use crate::config::TokenConfig;

pub struct Signer {
    issuer: String,
    audience: String,
    pub access_ttl: Duration,
    /// Replaced whole when a key file changes (`follow`).
    keys: Swap<Keys>,
    /// The current and previous keys' PEM as last taken, from which a
    /// changed one rebuilds `keys`.
    pems: Arc<Mutex<[Option<String>; 2]>>,
}

/// The key that signs and the keys published for verifiers.
struct Keys {
    kid: String,
    key: EncodingKey,
    published: Vec<SigningKey>,
}

fn published(key: &EncodingKey) -> anyhow::Result<SigningKey> {
    let jwk = Jwk::from_encoding_key(key, Algorithm::ES256)?;
    let kid = jwk.thumbprint(ThumbprintHash::SHA256)?;
    let AlgorithmParameters::EllipticCurve(ec) = jwk.algorithm else {
        anyhow::bail!("the signing key is not an EC key");
    };
    Ok(SigningKey {
        kid,
        x: ec.x,
        y: ec.y,
    })
}

fn from_pem(pem: &str) -> anyhow::Result<EncodingKey> {
    EncodingKey::from_ec_pem(pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("not a P-256 PKCS#8 PEM key: {e}"))
}

/// The current key (`pems[0]`, or without one a key of this process's
/// own) signs; both are published.
fn keys(pems: &[Option<String>; 2]) -> anyhow::Result<Keys> {
    let key = match &pems[0] {
        Some(pem) => from_pem(pem)?,
        None => {
            let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
                .map_err(|_| anyhow::anyhow!("key generation failed"))?;
            let pkcs8 = pair
                .to_pkcs8v1()
                .map_err(|_| anyhow::anyhow!("key export failed"))?;
            EncodingKey::from_ec_der(pkcs8.as_ref())
        }
    };
    let current = published(&key)?;
    let mut published_keys = vec![current.clone()];
    if let Some(previous) = &pems[1] {
        published_keys.push(published(&from_pem(previous)?)?);
    }
    Ok(Keys {
        kid: current.kid,
        key,
        published: published_keys,
    })
}

impl Signer {
    pub fn new(config: &TokenConfig) -> anyhow::Result<Self> {
        let pem = |s: &Option<Secret>| s.as_ref().map(|s| s.expose().to_string());
        let pems = [pem(&config.signing_key), pem(&config.previous_key)];
        Ok(Self {
            issuer: config.issuer.clone(),
            audience: config.audience.clone(),
            access_ttl: config.access_ttl,
            keys: Swap::new(keys(&pems)?),
            pems: Arc::new(Mutex::new(pems)),
        })
    }

    /// The key files, when the keys came from files: a changed one is
    /// taken when both keys then parse (the last good pair stays
    /// otherwise). To rotate without a token the gateway cannot yet
    /// verify, publish first: the new key as the previous one, then, once
    /// every replica has it, the new key as current and the old as previous
    /// (docs/security.md).
    pub fn follow(&self, config: &TokenConfig) -> Vec<Followed> {
        let files = [
            ("TOKEN_SIGNING_KEY", &config.signing_key),
            ("TOKEN_PREVIOUS_SIGNING_KEY", &config.previous_key),
        ];
        let mut followed = Vec::new();
        for (slot, (name, source)) in files.into_iter().enumerate() {
            let Some(source) = source else { continue };
            let (swap, pems) = (self.keys.clone(), self.pems.clone());
            let take = move |text: &str| {
                let mut pems = pems.lock().unwrap_or_else(|p| p.into_inner());
                let mut next = pems.clone();
                next[slot] = Some(text.to_string());
                swap.set(keys(&next).map_err(|e| e.to_string())?);
                *pems = next;
                Ok(())
            };
            followed.extend(Followed::of(name, source, Box::new(take)));
        }
        followed
    }

    pub fn signing_keys(&self) -> SigningKeys {
        SigningKeys {
            keys: self.keys.get().published.clone(),
            issuer: self.issuer.clone(),
            audience: self.audience.clone(),
        }
    }

    /// An access token of `customer_id` (a guest's, `guest`, works for
    /// carts and checkout only).
    pub fn access_token(
        &self,
        customer_id: &str,
        session_id: &str,
        guest: bool,
    ) -> Result<String, ServiceError> {
        let now = jsonwebtoken::get_current_timestamp();
        let claims = CustomerClaims {
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            sub: customer_id.to_string(),
            jti: uuid::Uuid::new_v4().to_string(),
            sid: session_id.to_string(),
            iat: now,
            exp: now + self.access_ttl.as_secs(),
            scope: guest.then(|| GUEST_SCOPE.to_string()),
        };
        let keys = self.keys.get();
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(keys.kid.clone());
        jsonwebtoken::encode(&header, &claims, &keys.key)
            .map(low_s::normalise)
            .map_err(|_| ServiceError::internal("token signing failed"))
    }
}

/// A new opaque refresh token: 256 random bits, base64url.
pub fn refresh_token() -> Result<String, ServiceError> {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| ServiceError::internal("no randomness"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// What is stored of a refresh token: its SHA-256, never the token.
pub fn refresh_key(token: &str) -> String {
    format!(
        "refresh:{}",
        URL_SAFE_NO_PAD.encode(digest(&SHA256, token.as_bytes()))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> TokenConfig {
        TokenConfig {
            issuer: "iss".into(),
            audience: "aud".into(),
            access_ttl: Duration::from_secs(900),
            refresh_ttl: Duration::from_secs(86_400),
            signing_key: None,
            previous_key: None,
        }
    }

    #[test]
    fn access_tokens_carry_kid_and_claims() {
        let signer = Signer::new(&config()).unwrap();
        let token = signer.access_token("c1", "s1", false).unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        let claims: CustomerClaims =
            jsonwebtoken::dangerous::insecure_decode_claims(&token).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        assert_eq!(
            header.kid.as_deref(),
            Some(signer.signing_keys().keys[0].kid.as_str())
        );
        assert_eq!(claims.exp - claims.iat, 900);
        assert_eq!((claims.sub.as_str(), claims.sid.as_str()), ("c1", "s1"));
    }

    #[test]
    fn during_rotation_both_keys_are_published_and_the_new_one_signs() {
        let pem = || {
            let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
            let der = pair.to_pkcs8v1().unwrap();
            let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
            format!("-----BEGIN PRIVATE KEY-----\n{b64}\n-----END PRIVATE KEY-----\n")
        };
        let (current, previous) = (pem(), pem());
        let mut cfg = config();
        cfg.signing_key = Some(storefront_platform::env::Secret::new(current));
        cfg.previous_key = Some(storefront_platform::env::Secret::new(previous));
        let signer = Signer::new(&cfg).unwrap();
        let keys = signer.signing_keys().keys;
        assert_eq!(keys.len(), 2);
        assert_ne!(keys[0].kid, keys[1].kid);
        let token = signer.access_token("c", "s", false).unwrap();
        assert_eq!(
            jsonwebtoken::decode_header(&token).unwrap().kid.as_deref(),
            Some(keys[0].kid.as_str())
        );
        cfg.signing_key = Some(storefront_platform::env::Secret::new("not a key"));
        assert!(
            Signer::new(&cfg).is_err(),
            "a bad configured key stops the service"
        );
    }

    #[test]
    fn refresh_tokens_are_random_and_stored_hashed() {
        let (a, b) = (refresh_token().unwrap(), refresh_token().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert!(!refresh_key(&a).contains(&a));
        assert_eq!(refresh_key(&a), refresh_key(&a));
    }
}
