//! Every path parameter (an id, a slug) is held to what an [`Id`] may be
//! before its handler runs: 422 `TOO_LONG` (or `INVALID_FORMAT`) naming
//! the parameter, so no downstream is ever asked about a 2 KiB id. A
//! route layer, so that it sees the matched route's parameters.

use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::model::bounded::Id;

pub async fn bounded_ids(req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    if let Ok(params) = RawPathParams::from_request_parts(&mut parts, &()).await {
        for (name, value) in &params {
            if let Err((code, message)) = Id::check(value) {
                return ApiError::invalid_field(name, code, format!("{name} {message}"))
                    .into_response();
            }
        }
    }
    next.run(Request::from_parts(parts, body)).await
}
