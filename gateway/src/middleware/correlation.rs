//! `Correlation-Id`: echoed when the request sent a UUID, otherwise a fresh
//! v4; carried into request extensions, the log span and downstream calls.
//! The same layer opens the request's span (continuing a W3C `traceparent`)
//! and records the request metrics.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use storefront_common::telemetry::{CORRELATION_ID_HEADER, continue_trace};
use tracing::Instrument;
use uuid::Uuid;

use crate::error::ApiError;

/// What every downstream call of a request carries: the correlation id (as
/// the header value sent on) and the route's deadline, if it has its own.
#[derive(Debug, Clone)]
pub struct CorrelationId {
    pub id: HeaderValue,
    pub deadline: Option<Duration>,
}

/// A route's own downstream deadline (`ROUTE_TIMEOUTS`).
#[derive(Debug, Clone, Copy)]
pub struct RouteDeadline(pub Duration);

/// Marks requests under a configured path prefix with its deadline (the
/// longest prefix wins).
pub async fn route_deadline(
    axum::extract::State(routes): axum::extract::State<Arc<Vec<(String, Duration)>>>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let best = routes
        .iter()
        .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
        .max_by_key(|(p, _)| p.len());
    if let Some(&(_, deadline)) = best {
        req.extensions_mut().insert(RouteDeadline(deadline));
    }
    next.run(req).await
}

pub async fn correlation_id(mut req: Request, next: Next) -> Response {
    let sent = req
        .headers()
        .get(CORRELATION_ID_HEADER)
        .filter(|v| v.to_str().ok().is_some_and(|s| Uuid::parse_str(s).is_ok()))
        .cloned();
    let value = sent.unwrap_or_else(|| {
        let id = Uuid::new_v4();
        HeaderValue::from_str(id.hyphenated().encode_lower(&mut Uuid::encode_buffer()))
            .unwrap_or_else(|_| HeaderValue::from_static("00000000-0000-0000-0000-000000000000"))
    });
    let span = tracing::info_span!(
        "http",
        otel.kind = "server",
        method = %req.method(),
        path = %req.uri().path(),
        correlation_id = value.to_str().unwrap_or_default(),
        trace_id = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
    );
    continue_trace(&span, req.headers());
    req.extensions_mut().insert(CorrelationId {
        id: value.clone(),
        deadline: None,
    });
    let method = req.method().clone();
    let started = std::time::Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    span.record("http.response.status_code", status);
    span.in_scope(|| {
        tracing::info!(
            status,
            latency_us = elapsed.as_micros() as u64,
            "request served"
        );
    });
    record_metrics(&response, &method, status, elapsed);
    response.headers_mut().insert(CORRELATION_ID_HEADER, value);
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

impl<S: Send + Sync> FromRequestParts<S> for CorrelationId {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let mut id = parts
            .extensions
            .get::<CorrelationId>()
            .cloned()
            .ok_or_else(ApiError::internal)?;
        id.deadline = parts.extensions.get::<RouteDeadline>().map(|d| d.0);
        Ok(id)
    }
}
