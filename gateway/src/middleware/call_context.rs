//! The call context of a request: its correlation id (echoed when the
//! request sent a UUID, otherwise a fresh v4) and its route's deadline,
//! carried into every downstream call the request makes.

use axum::extract::{FromRequestParts, Request};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::Response;
use storefront_platform::telemetry::CORRELATION_ID_HEADER;
use uuid::Uuid;

use crate::error::ApiError;
use crate::policy::RoutePolicy;

pub use crate::downstream::CallContext;

/// Gives the request its correlation id (in the extensions, for the
/// layers inside and the handler) and echoes it on the response.
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
    req.extensions_mut().insert(CallContext {
        correlation_id: value.clone(),
        deadline: None,
    });
    let mut response = next.run(req).await;
    response.headers_mut().insert(CORRELATION_ID_HEADER, value);
    response
}

impl<S: Send + Sync> FromRequestParts<S> for CallContext {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let mut context = parts
            .extensions
            .get::<CallContext>()
            .cloned()
            .ok_or_else(ApiError::internal)?;
        context.deadline = RoutePolicy::of_request(&parts.extensions).deadline;
        Ok(context)
    }
}
