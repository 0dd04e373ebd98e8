//! Customer authentication at the edge: `X-BFF-Token` is verified here, from
//! the customers service's published keys (cached), with algorithm, issuer
//! and audience pinned, then checked against the shared revocations, so a
//! request costs no extra hop and a logout takes effect at once everywhere.

use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::StatusCode;
use axum::http::request::Parts;
use jsonwebtoken::errors::ErrorKind as JwtErrorKind;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
    EllipticCurveKeyType, Jwk, JwkSet,
};
use jsonwebtoken::{Algorithm, AlgorithmFamily, Validation};
use storefront_domain::customer_token::{
    CustomerClaims, low_s, revoked_session_key, revoked_token_key,
};
use storefront_platform::identity::keys::{KeyCache, KeyError};
use storefront_platform::store::Store;
use storefront_proto::customers::v1::GetSigningKeysRequest;

use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::token_cache::TokenCache;

pub const TOKEN_HEADER: &str = "x-bff-token";

/// The verified customer behind a request.
#[derive(Debug, Clone)]
pub struct Customer {
    pub claims: CustomerClaims,
}

impl Customer {
    pub fn id(&self) -> &str {
        &self.claims.sub
    }

    /// Resolves a `{customerId}` path segment: `me` or the caller's own id;
    /// anything else is 403.
    pub fn owns(&self, customer_id: &str) -> Result<(), ApiError> {
        if customer_id == "me" || customer_id == self.id() {
            Ok(())
        } else {
            Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "you may only access your own customer resources",
            ))
        }
    }
}

pub struct CustomerAuth {
    validation: Validation,
    keys: KeyCache,
    revocations: Store,
    verified: TokenCache,
}

fn unauthorized(code: &'static str, message: &'static str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, code, message)
}

impl CustomerAuth {
    pub fn new(issuer: &str, audience: &str, revocations: Store) -> Self {
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 5;
        validation.validate_nbf = true;
        Self {
            validation,
            keys: KeyCache::new(AlgorithmFamily::Ec),
            revocations,
            verified: TokenCache::default(),
        }
    }

    pub async fn verify(
        &self,
        token: &str,
        ds: &Downstreams,
        correlation: &CallContext,
    ) -> Result<Customer, ApiError> {
        let claims = self.claims(token, || fetch_keys(ds, correlation)).await?;
        self.admit(claims).await
    }

    /// The customer of verified `claims`, unless their token or session
    /// was revoked.
    pub(crate) async fn admit(&self, claims: CustomerClaims) -> Result<Customer, ApiError> {
        let revoked = self
            .revocations
            .exists_any(&[
                &revoked_token_key(&claims.jti),
                &revoked_session_key(&claims.sid),
            ])
            .await
            .map_err(|e| ApiError::unavailable("authentication", e))?;
        if revoked {
            return Err(unauthorized(
                "TOKEN_REVOKED",
                "the session has ended; log in again",
            ));
        }
        Ok(Customer { claims })
    }
}

impl CustomerAuth {
    /// The claims of a token signed by one of the keys `fetch` publishes,
    /// with algorithm, issuer, audience and times checked (not revocation).
    pub async fn claims<F, Fut>(&self, token: &str, fetch: F) -> Result<CustomerClaims, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<JwkSet, String>>,
    {
        let invalid = || unauthorized("INVALID_TOKEN", "the session token is invalid");
        let now = jsonwebtoken::get_current_timestamp();
        if let Some(claims) = self.verified.get(token, now, self.validation.leeway) {
            return Ok(claims);
        }
        // One spelling per token: the other form of the same signature is
        // refused (see `low_s`), so no two strings carry one session.
        if !low_s::is_low(token) {
            return Err(invalid());
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| invalid())?;
        if header.alg != Algorithm::ES256 {
            return Err(invalid());
        }
        let kid = header.kid.ok_or_else(invalid)?;
        let key = self.keys.key(&kid, fetch).await.map_err(|e| match e {
            KeyError::UnknownKey => invalid(),
            KeyError::Unavailable(detail) => ApiError::unavailable("authentication", detail),
        })?;
        let data =
            jsonwebtoken::decode::<CustomerClaims>(token, &key, &self.validation).map_err(|e| {
                match e.kind() {
                    JwtErrorKind::ExpiredSignature => {
                        unauthorized("TOKEN_EXPIRED", "the session token has expired")
                    }
                    _ => invalid(),
                }
            })?;
        self.verified.put(token, &data.claims);
        Ok(data.claims)
    }
}

/// The customers service's keys as a JWK set.
async fn fetch_keys(ds: &Downstreams, correlation: &CallContext) -> Result<JwkSet, String> {
    let reply = ds
        .customers()
        .get_signing_keys(correlation, GetSigningKeysRequest {})
        .await
        .map_err(|e| e.to_string())?;
    let keys = reply
        .keys
        .into_iter()
        .map(|k| p256_jwk(k.kid, k.x, k.y))
        .collect();
    Ok(JwkSet { keys })
}

/// A P-256 public key as a JWK (coordinates base64url).
pub fn p256_jwk(kid: String, x: String, y: String) -> Jwk {
    Jwk {
        common: CommonParameters {
            key_id: Some(kid),
            ..Default::default()
        },
        algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
            key_type: EllipticCurveKeyType::EC,
            curve: EllipticCurve::P256,
            x,
            y,
        }),
    }
}

/// The claims of the request's X-BFF-Token, verified once by the edge
/// (the rate-limit layer keys the session budget by their `sid`) and read
/// again by [`Customer`], which checks only revocation then.
#[derive(Debug, Clone)]
pub struct VerifiedToken(pub CustomerClaims);

/// The session of the request's token if it verifies (signature, issuer,
/// audience, times; not revocation), kept in the request for [`Customer`].
/// None without a token or with one that does not verify: such a request
/// is no session's, and a customer route refuses it later.
pub async fn verified_session(
    auth: &CustomerAuth,
    ds: &Downstreams,
    req: &mut axum::extract::Request,
) -> Option<String> {
    let token = req
        .headers()
        .get(TOKEN_HEADER)?
        .to_str()
        .ok()?
        .trim()
        .to_string();
    let correlation = req.extensions().get::<CallContext>()?.clone();
    let claims = auth
        .claims(&token, || fetch_keys(ds, &correlation))
        .await
        .ok()?;
    let sid = claims.sid.clone();
    req.extensions_mut().insert(VerifiedToken(claims));
    Some(sid)
}

/// The verified token behind a request, guest or customer.
async fn verified<S>(parts: &mut Parts, state: &S) -> Result<Customer, ApiError>
where
    S: Send + Sync,
    SharedAuth: FromRef<S>,
    Arc<Downstreams>: FromRef<S>,
{
    let auth = SharedAuth::from_ref(state);
    if let Some(VerifiedToken(claims)) = parts.extensions.get::<VerifiedToken>() {
        return auth.admit(claims.clone()).await;
    }
    let token = parts
        .headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            unauthorized(
                "UNAUTHORIZED",
                "this endpoint needs an X-BFF-Token from POST /auth/login",
            )
        })?;
    let correlation = CallContext::from_request_parts(parts, state).await?;
    auth.verify(&token, &Arc::<Downstreams>::from_ref(state), &correlation)
        .await
}

/// A customer's token: a guest's is 403 (profile, addresses, preferences,
/// sessions, orders belong to an account).
impl<S> FromRequestParts<S> for Customer
where
    S: Send + Sync,
    SharedAuth: FromRef<S>,
    Arc<Downstreams>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let customer = verified(parts, state).await?;
        if customer.claims.is_guest() {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "a guest session cannot use this: sign up or log in",
            ));
        }
        Ok(customer)
    }
}

/// Whoever may shop: a customer or a guest (carts and checkout).
#[derive(Debug, Clone)]
pub struct Shopper(pub Customer);

impl Shopper {
    pub fn id(&self) -> &str {
        self.0.id()
    }

    pub fn is_guest(&self) -> bool {
        self.0.claims.is_guest()
    }
}

impl<S> FromRequestParts<S> for Shopper
where
    S: Send + Sync,
    SharedAuth: FromRef<S>,
    Arc<Downstreams>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        verified(parts, state).await.map(Shopper)
    }
}

pub type SharedAuth = Arc<CustomerAuth>;
