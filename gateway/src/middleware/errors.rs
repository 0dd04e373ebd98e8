//! The last line of defence: any error response not already a JSON error
//! body (axum's 405, a body-limit 413, ...) is replaced by one, keeping its
//! status and headers such as `Allow`; a panic becomes a 500 body.

use std::any::Any;

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

pub async fn normalize(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(&response) {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    let replacement = ApiError::for_status(status).into_response();
    let (new_parts, body) = replacement.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in &new_parts.headers {
        if name != header::CONTENT_TYPE {
            parts.headers.insert(name.clone(), value.clone());
        }
    }
    Response::from_parts(parts, body)
}

/// Headers every answer carries: no content sniffing, and a policy that
/// lets a JSON answer load nothing nor be framed, should a browser ever
/// render one.
pub async fn security_headers(req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(
            "default-src 'none'; frame-ancestors 'none'",
        ));
    response
}

/// Turns a handler panic into a 500 body; the panic text goes to the log only.
pub fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %detail, "handler panicked");
    ApiError::internal().into_response()
}
