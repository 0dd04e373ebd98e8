//! The rate-limit layer: every request counts against its client IP, its
//! session if it has one, and the budget of an expensive endpoint; over any
//! of them is 429 with `Retry-After`; every limited answer carries the IETF
//! `RateLimit-Policy` and `RateLimit` headers.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Client, Decision, Limiter, LoginFailures, Scope, TrustedProxies, client_ip};
use crate::bff_token::{SharedAuth, verified_session};
use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::policy::RoutePolicy;

pub struct RateLimits {
    pub limiter: Arc<Limiter>,
    pub trusted: TrustedProxies,
    /// Failed password checks per account.
    pub login_failures: LoginFailures,
}

impl RateLimits {
    /// The decisions of every scope a request falls in: its client's, its
    /// session's (the verified `sid`: every token of one session, however
    /// spelt or refreshed, spends one budget), and the route's own
    /// `budget`.
    async fn decide(
        &self,
        budget: Option<Scope>,
        client: &Client,
        session: Option<&str>,
    ) -> Vec<Decision> {
        let address = client.to_string();
        let network;
        let mut scopes = vec![(Scope::Ip, address.as_str())];
        if let Some(budget) = budget {
            let key = if budget.per_network() {
                network = client.network();
                network.as_str()
            } else {
                address.as_str()
            };
            scopes.push((budget, key));
            if let (Some(per_session), Some(sid)) = (budget.per_session(), session) {
                scopes.push((per_session, sid));
            }
        }
        if let Some(sid) = session {
            scopes.push((Scope::Session, sid));
        }
        let mut decisions = Vec::with_capacity(scopes.len());
        for (scope, key) in scopes {
            if let Some(d) = self.limiter.check(scope, key).await {
                decisions.push(d);
            }
        }
        decisions
    }
}

/// The network a request comes from (an IPv4 /24, an IPv6 /64), for the
/// handlers that key on it (login's failure budget).
#[derive(Debug, Clone)]
pub struct ClientNetwork(pub String);

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
    State(auth): State<SharedAuth>,
    State(downstreams): State<Arc<Downstreams>>,
    mut req: Request,
    next: Next,
) -> Response {
    let route = RoutePolicy::of_request(req.extensions());
    if route.operational {
        return next.run(req).await;
    }
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let client = client_ip(peer, req.headers(), &limits.trusted);
    let session = verified_session(&auth, &downstreams, &mut req).await;
    let decisions = limits
        .decide(route.budget, &client, session.as_deref())
        .await;
    if decisions.iter().any(|d| !d.allowed) {
        return too_many(&decisions);
    }
    req.extensions_mut().insert(ClientNetwork(client.network()));
    let mut response = next.run(req).await;
    // A handler's own limit (login per email) already said what applies.
    if !response.headers().contains_key("ratelimit-policy") {
        annotate(response.headers_mut(), &decisions);
    }
    response
}
