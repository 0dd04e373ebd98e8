//! What each request leaves behind: its span (continuing a W3C
//! `traceparent`), one access log line, and the HTTP metrics, labelled by
//! the route template that served it.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use storefront_platform::telemetry::continue_trace;
use tracing::Instrument;

use super::call_context::CallContext;

/// Runs inside `call_context::correlation_id`, whose id the span carries.
pub async fn observe(req: Request, next: Next) -> Response {
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
            path = %req.uri().path(),
            correlation_id,
            trace_id = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
        )
    };
    continue_trace(&span, req.headers());
    let method = req.method().clone();
    let started = std::time::Instant::now();
    let response = next.run(req).instrument(span.clone()).await;
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
