//! Oversized request headers are refused before anything reads them: 431
//! in the spec's shape. hyper already caps what it buffers (about 400 KiB
//! of headers, 100 of them) and answers past that on its own; below that
//! cap, these limits keep a single request from carrying megabytes of
//! headers into every layer (logging, tracing, rate-limit keys).

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// One header value at most.
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// All headers of a request together at most.
pub const MAX_HEADERS_BYTES: usize = 32 * 1024;

pub async fn limit_headers(req: Request, next: Next) -> Response {
    let mut total = 0;
    for (name, value) in req.headers() {
        let size = name.as_str().len() + value.len();
        total += size;
        if value.len() > MAX_HEADER_BYTES || total > MAX_HEADERS_BYTES {
            return ApiError::new(
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "HEADERS_TOO_LARGE",
                format!(
                    "request headers are limited to {MAX_HEADER_BYTES} bytes each and \
                     {MAX_HEADERS_BYTES} bytes together"
                ),
            )
            .into_response();
        }
    }
    next.run(req).await
}
