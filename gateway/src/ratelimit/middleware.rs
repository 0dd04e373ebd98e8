//! The rate-limit layer: every request counts against its client IP, its
//! session if it has one, and the budget of an expensive endpoint; over any
//! of them is 429 with `Retry-After`; every limited answer carries the IETF
//! `RateLimit-Policy` and `RateLimit` headers.

use std::net::SocketAddr;
use std::sync::Arc;

use aws_lc_rs::digest::{SHA256, digest};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Decision, Limiter, LoginFailures, Scope, TrustedProxies, client_ip};
use crate::bff_token::TOKEN_HEADER;
use crate::error::ApiError;
use crate::routes::policy;

pub struct RateLimits {
    pub limiter: Arc<Limiter>,
    pub trusted: TrustedProxies,
    /// Failed password checks per account.
    pub login_failures: LoginFailures,
}

impl RateLimits {
    /// The decisions of every scope a request falls in: its client's, its
    /// session's, and the route's own `budget`.
    async fn decide(
        &self,
        budget: Option<Scope>,
        peer: Option<std::net::IpAddr>,
        headers: &HeaderMap,
    ) -> Vec<Decision> {
        let ip = client_ip(peer, headers, &self.trusted).to_string();
        let mut scopes = vec![(Scope::Ip, ip.clone())];
        if let Some(budget) = budget {
            scopes.push((budget, ip));
        }
        if let Some(token) = headers.get(TOKEN_HEADER) {
            let hash = digest(&SHA256, token.as_bytes());
            let key: String = hash.as_ref()[..12]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            scopes.push((Scope::Session, key));
        }
        let mut decisions = Vec::with_capacity(scopes.len());
        for (scope, key) in scopes {
            if let Some(d) = self.limiter.check(scope, &key).await {
                decisions.push(d);
            }
        }
        decisions
    }
}

/// Adds `RateLimit-Policy` (every scope) and `RateLimit` (the tightest).
pub fn annotate(headers: &mut HeaderMap, decisions: &[Decision]) {
    // No limit applied (all turned off): no header, rather than an empty one.
    if decisions.is_empty() {
        return;
    }
    let policy: Vec<String> = decisions.iter().map(|d| d.quota.policy(d.scope)).collect();
    if let Ok(v) = HeaderValue::from_str(&policy.join(", ")) {
        headers.insert("ratelimit-policy", v);
    }
    if let Some(d) = decisions.iter().min_by_key(|d| d.remaining) {
        let value = format!("\"{}\";r={};t={}", d.scope.name(), d.remaining, d.reset);
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert("ratelimit", v);
        }
    }
}

/// The 429 for the denied decisions among `decisions` (503 when a scope
/// that fails closed could not be decided).
pub fn too_many(decisions: &[Decision]) -> Response {
    for d in decisions.iter().filter(|d| !d.allowed) {
        let reason = if d.unavailable {
            "unavailable"
        } else {
            "exceeded"
        };
        metrics::counter!("rate_limit_rejections_total", "scope" => d.scope.name(), "reason" => reason)
            .increment(1);
    }
    if decisions.iter().any(|d| d.unavailable) {
        let mut response = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "RATE_LIMITER_UNAVAILABLE",
            "request limits cannot be checked right now; retry shortly",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(1u64));
        return response;
    }
    let retry_after = decisions
        .iter()
        .filter(|d| !d.allowed)
        .map(|d| d.retry_after)
        .max()
        .unwrap_or(1)
        .max(1);
    let scopes: Vec<&str> = decisions
        .iter()
        .filter(|d| !d.allowed)
        .map(|d| d.scope.name())
        .collect();
    let message = format!(
        "too many requests ({}); retry after {retry_after} s",
        scopes.join(", ")
    );
    let mut response = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "RATE_LIMIT_EXCEEDED",
        message,
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
    annotate(response.headers_mut(), decisions);
    response
}

pub async fn rate_limit(
    State(limits): State<Arc<RateLimits>>,
    req: Request,
    next: Next,
) -> Response {
    let route = policy::of(req.uri().path());
    if route.operational {
        return next.run(req).await;
    }
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let decisions = limits.decide(route.budget, peer, req.headers()).await;
    if decisions.iter().any(|d| !d.allowed) {
        return too_many(&decisions);
    }
    let mut response = next.run(req).await;
    // A handler's own limit (login per email) already said what applies.
    if !response.headers().contains_key("ratelimit-policy") {
        annotate(response.headers_mut(), &decisions);
    }
    response
}
