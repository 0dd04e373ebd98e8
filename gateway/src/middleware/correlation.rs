//! `Correlation-Id`: echoed when the request sent a UUID, otherwise a fresh
//! v4; carried into request extensions, the log span and downstream calls.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{FromRequestParts, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use storefront_common::telemetry::CORRELATION_ID_HEADER;
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
        method = %req.method(),
        path = %req.uri().path(),
        correlation_id = value.to_str().unwrap_or_default(),
    );
    req.extensions_mut().insert(CorrelationId {
        id: value.clone(),
        deadline: None,
    });
    let started = std::time::Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    span.in_scope(|| {
        tracing::info!(
            status = response.status().as_u16(),
            latency_us = started.elapsed().as_micros() as u64,
            "request served"
        );
    });
    response.headers_mut().insert(CORRELATION_ID_HEADER, value);
    response
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
