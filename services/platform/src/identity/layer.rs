//! The tower layer that demands a valid identity token on every gRPC call
//! except health checks, and reflection where it is open.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tonic::Status;
use tower::{Layer, Service};

use super::verifier::{IdentityVerifier, VerifyError};

/// gRPC path prefixes that need no identity: probes must work without one.
const HEALTH: &str = "/grpc.health.v1.Health/";
/// Reflection, open where the settings say so (`settings::Reflection`).
const REFLECTION: &str = "/grpc.reflection.";

#[derive(Clone)]
pub struct IdentityLayer {
    verifier: Arc<IdentityVerifier>,
    open_reflection: bool,
}

impl IdentityLayer {
    pub fn new(verifier: Arc<IdentityVerifier>) -> Self {
        Self {
            verifier,
            open_reflection: false,
        }
    }

    /// Reflection answered without a token (outside production).
    pub fn with_open_reflection(mut self, open: bool) -> Self {
        self.open_reflection = open;
        self
    }
}

impl<S> Layer<S> for IdentityLayer {
    type Service = RequireIdentity<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RequireIdentity {
            inner,
            verifier: self.verifier.clone(),
            open_reflection: self.open_reflection,
        }
    }
}

#[derive(Clone)]
pub struct RequireIdentity<S> {
    inner: S,
    verifier: Arc<IdentityVerifier>,
    open_reflection: bool,
}

impl<S, B, R> Service<http::Request<B>> for RequireIdentity<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
    R: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        // The clone is the one that was not made ready; keep the ready one.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let verifier = self.verifier.clone();
        let open_reflection = self.open_reflection;
        Box::pin(async move {
            let path = req.uri().path();
            if path.starts_with(HEALTH) || (open_reflection && path.starts_with(REFLECTION)) {
                return inner.call(req).await;
            }
            let token = req
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            let Some(token) = token else {
                return Ok(Status::unauthenticated("identity token required").into_http());
            };
            let method = path.rsplit('/').next().unwrap_or_default();
            match verifier.verify(token, method).await {
                Ok(caller) => {
                    req.extensions_mut().insert(caller);
                    inner.call(req).await
                }
                Err(VerifyError::Unauthenticated(msg)) => {
                    Ok(Status::unauthenticated(msg).into_http())
                }
                Err(VerifyError::PermissionDenied(msg)) => {
                    Ok(Status::permission_denied(msg).into_http())
                }
                Err(e @ VerifyError::Unavailable(_)) => {
                    Ok(Status::unavailable(e.to_string()).into_http())
                }
            }
        })
    }
}
