//! What each request leaves behind: its span, one access log line, and
//! the HTTP metrics, labelled by the route template that served it. The
//! span continues a W3C `traceparent` only from a caller the edge trusts
//! (a proxy in `TRUSTED_PROXIES`, or anyone on the internal port); a
//! public client's starts a trace of its own, linked to the one it sent,
//! so no client picks its traces' ids or sampling. The path is logged
//! once, on the access line, cut to `LOGGED_PATH_CHARS`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use storefront_platform::telemetry::{continue_trace, link_trace};
use tracing::Instrument;

use super::call_context::CallContext;
use crate::ratelimit::TrustedProxies;

/// Whose `traceparent` a request's span continues.
#[derive(Debug, Clone)]
pub enum TraceTrust {
    /// Every caller (the internal port: callers are verified services).
    Everyone,
    /// Only these peers (the public port's trusted proxies).
    Proxies(TrustedProxies),
}

impl TraceTrust {
    fn trusts(&self, peer: Option<IpAddr>) -> bool {
        match self {
            TraceTrust::Everyone => true,
            TraceTrust::Proxies(proxies) => peer.is_some_and(|p| proxies.trusts(p)),
        }
    }
}

/// The most of a path the access log shows.
const LOGGED_PATH_CHARS: usize = 128;

/// A path as the log shows it: cut at `LOGGED_PATH_CHARS`, marked when cut.
struct LoggedPath<'a>(&'a str);

impl std::fmt::Display for LoggedPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.char_indices().nth(LOGGED_PATH_CHARS) {
            Some((cut, _)) => write!(f, "{}…", &self.0[..cut]),
            None => f.write_str(self.0),
        }
    }
}

/// Runs inside `call_context::correlation_id`, whose id the span carries.
pub async fn observe(State(trust): State<Arc<TraceTrust>>, req: Request, next: Next) -> Response {
    // The span copies its fields when it opens: the id is borrowed, not
    // allocated per request.
    let span = {
        let correlation_id = req
            .extensions()
            .get::<CallContext>()
            .and_then(|c| c.correlation_id.to_str().ok())
            .unwrap_or_default();
        tracing::info_span!(
            "http",
            otel.kind = "server",
            method = %req.method(),
            correlation_id,
            trace_id = tracing::field::Empty,
            http.route = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
        )
    };
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    if trust.trusts(peer) {
        continue_trace(&span, req.headers());
    } else {
        link_trace(&span, req.headers());
    }
    let method = req.method().clone();
    // A clone of the URI shares its bytes.
    let uri = req.uri().clone();
    let started = std::time::Instant::now();
    let response = next.run(req).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    if let Some(route) = response.extensions().get::<MatchedPath>() {
        span.record("http.route", route.as_str());
    }
    span.in_scope(|| {
        tracing::info!(
            status,
            latency_us = elapsed.as_micros() as u64,
            path = %LoggedPath(uri.path()),
            "request served"
        );
    });
    record_metrics(&response, &method, status, elapsed);
    response
}

/// Marks a response with the route template that served it, for the
/// request metrics recorded outside the router.
pub async fn matched_route(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().cloned();
    let mut response = next.run(req).await;
    if let Some(route) = route {
        response.extensions_mut().insert(route);
    }
    response
}

fn record_metrics(response: &Response, method: &Method, status: u16, elapsed: Duration) {
    // Labelled by template, never by raw path: ids would explode the series.
    // One shared string for both series; static labels where they can be.
    let route: Arc<str> = response
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .into();
    let method = method_label(method);
    metrics::histogram!(
        "http_request_duration_seconds",
        "route" => route.clone(),
        "method" => method,
    )
    .record(elapsed.as_secs_f64());
    metrics::counter!(
        "http_requests_total",
        "route" => route,
        "method" => method,
        "status" => status.to_string(),
    )
    .increment(1);
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_path_is_cut() {
        assert_eq!(LoggedPath("/products/p-1").to_string(), "/products/p-1");
        let long = format!("/products/{}", "é".repeat(1000));
        let shown = LoggedPath(&long).to_string();
        assert_eq!(shown.chars().count(), LOGGED_PATH_CHARS + 1);
        assert!(shown.ends_with('…'));
    }
}
