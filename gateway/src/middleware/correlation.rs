//! `Correlation-Id`: echoed when the request sent a UUID, otherwise a fresh
//! v4; carried into request extensions, the log span and downstream calls.

use axum::extract::{FromRequestParts, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use storefront_common::telemetry::CORRELATION_ID_HEADER;
use tracing::Instrument;
use uuid::Uuid;

use crate::error::ApiError;

/// The request's correlation id, as the header value sent downstream.
#[derive(Debug, Clone)]
pub struct CorrelationId(pub HeaderValue);

impl CorrelationId {
    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }
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
    req.extensions_mut().insert(CorrelationId(value.clone()));
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
        parts
            .extensions
            .get::<CorrelationId>()
            .cloned()
            .ok_or_else(ApiError::internal)
    }
}
