//! HTTP caching of public GETs: `Cache-Control: public, max-age, stale-while-
//! revalidate` per resource group, a strong `ETag` hashed from the body bytes
//! already serialised (never serialising twice), `Vary`, and 304 for a
//! matching `If-None-Match`.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::policy::{CachePolicies, CachePolicy, Caching, RoutePolicy};

/// What a cached body may weigh: far above any bounded page (100
/// products are about 250 KB), so reaching it is a bug answered with 500.
const MAX_HASHED_BYTES: usize = 4 * 1024 * 1024;

fn etag_of(bytes: &[u8]) -> HeaderValue {
    let hash = xxhash_rust::xxh3::xxh3_128(bytes);
    HeaderValue::from_str(&format!("\"{hash:032x}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

/// Whether `If-None-Match` (`sent`) names `etag` (or is `*`).
fn matches(sent: Option<&HeaderValue>, etag: &HeaderValue) -> bool {
    let Some(sent) = sent.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let ours = etag.to_str().unwrap_or_default();
    sent.split(',')
        .map(str::trim)
        .any(|t| t == "*" || t == ours || t.strip_prefix("W/") == Some(ours))
}

/// Caching as the route's policy says (`crate::policy`): public GETs
/// validated and marked with their group's freshness, answers tied to a
/// customer marked `private, no-store`.
pub async fn caching(State(groups): State<CachePolicies>, req: Request, next: Next) -> Response {
    match RoutePolicy::of_request(req.extensions()).caching {
        Caching::Public(group) => public_cache(groups.of(group), req, next).await,
        Caching::Private => {
            let mut response = next.run(req).await;
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, no-store"),
            );
            response
        }
        Caching::Unstated => next.run(req).await,
    }
}

async fn public_cache(policy: CachePolicy, req: Request, next: Next) -> Response {
    let cacheable = matches!(*req.method(), Method::GET | Method::HEAD);
    let conditional = req.headers().get(header::IF_NONE_MATCH).cloned();
    let response = next.run(req).await;
    if !cacheable || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_HASHED_BYTES).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let etag = etag_of(&bytes);
    parts.headers.insert(header::CACHE_CONTROL, policy.header());
    parts
        .headers
        .insert(header::VARY, HeaderValue::from_static("X-Api-Version"));
    parts.headers.insert(header::ETAG, etag.clone());
    if matches(conditional.as_ref(), &etag) {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_TYPE);
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_strong_and_compare_as_lists() {
        let tag = etag_of(b"{}");
        assert!(tag.to_str().unwrap().starts_with('"') && tag.len() == 34);
        assert_ne!(tag, etag_of(b"{ }"));
        let listed = HeaderValue::from_str(&format!("\"x\", {}", tag.to_str().unwrap())).unwrap();
        assert!(matches(Some(&listed), &tag));
        assert!(matches(Some(&HeaderValue::from_static("*")), &tag));
        assert!(!matches(Some(&HeaderValue::from_static("\"other\"")), &tag));
        assert!(!matches(None, &tag));
    }
}
