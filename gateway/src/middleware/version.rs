//! API versions (as `openapi.json` describes them): the `X-Api-Version` header is
//! required, validated and echoed; a trailing path segment `v<major>[.minor]`
//! after a versioned resource wins over it and is stripped before routing.
//! Knowing the path that will be routed, this layer also resolves the
//! route's policy, once per request, into the request's extensions.

use std::sync::Arc;
use storefront_proto::error::codes;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::policy::Policies;

pub const VERSION_HEADER: &str = "x-api-version";

/// Each resource with its live major versions, latest last.
const RESOURCES: &[(&str, &[u32])] = &[
    ("auth", &[1]),
    ("carts", &[1]),
    ("categories", &[1]),
    ("checkout", &[1]),
    ("collections", &[1]),
    ("content", &[1]),
    ("customers", &[1]),
    ("markets", &[1]),
    ("orders", &[1, 2]),
    ("products", &[1]),
    ("promotions", &[1]),
    ("search", &[1]),
];

/// The version a request is served at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiVersion {
    pub major: u32,
    pub minor: u32,
    /// True when a path segment chose it.
    pub from_path: bool,
}

fn majors(resource: &str) -> Option<&'static [u32]> {
    RESOURCES
        .iter()
        .find(|(name, _)| *name == resource)
        .map(|(_, m)| *m)
}

/// `v1`, `v1.2` (path) -> (major, minor).
fn parse_version(s: &str, minor_required: bool) -> Option<(u32, u32)> {
    let rest = s.strip_prefix('v')?;
    let (major, minor) = match rest.split_once('.') {
        Some((major, minor)) => (major, Some(minor)),
        None if minor_required => return None,
        None => (rest, None),
    };
    let digits = |d: &str| !d.is_empty() && d.len() <= 4 && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !minor.is_none_or(digits) {
        return None;
    }
    Some((
        major.parse().ok()?,
        minor.map_or(Some(0), |m| m.parse().ok())?,
    ))
}

fn version_error(code: &str, message: &str) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "INVALID_API_VERSION",
        message.to_string(),
    )
    .field("X-Api-Version", code, message.to_string())
}

/// The header's (major, minor), or why it is refused.
fn header_version(value: Option<&HeaderValue>) -> Result<(u32, u32), ApiError> {
    let value = value.ok_or_else(|| {
        version_error(
            codes::REQUIRED,
            "the X-Api-Version header is required, e.g. v1.0",
        )
    })?;
    value
        .to_str()
        .ok()
        .and_then(|s| parse_version(s, true))
        .ok_or_else(|| {
            version_error(
                codes::INVALID_FORMAT,
                "X-Api-Version must look like v<major>.<minor>, e.g. v1.0",
            )
        })
}

/// `(resource, major, minor, path without the segment)` of a versioned path.
fn path_version(path: &str) -> Option<(&str, u32, u32, &str)> {
    let trimmed = path.trim_end_matches('/');
    let (rest, last) = trimmed.rsplit_once('/')?;
    let (major, minor) = parse_version(last, false)?;
    let resource = rest.rsplit('/').next()?;
    majors(resource)?;
    Some((resource, major, minor, rest))
}

/// The last known resource named in the path (`/customers/me/orders` -> orders).
fn resource_of(path: &str) -> Option<&str> {
    path.split('/').rev().find(|seg| majors(seg).is_some())
}

fn with_path(uri: &Uri, path: &str) -> Option<Uri> {
    let path_and_query = match uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    Uri::builder().path_and_query(path_and_query).build().ok()
}

pub async fn api_version(
    State(policies): State<Arc<Policies>>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let versioned = path_version(path);
    let routed = versioned.map_or(path, |(.., stripped)| stripped);
    let policy = policies.of(if routed.is_empty() { "/" } else { routed });
    if policy.operational {
        req.extensions_mut().insert(policy);
        return next.run(req).await;
    }
    let header = req.headers().get(VERSION_HEADER).cloned();
    let (major, minor) = match header_version(header.as_ref()) {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let echo = |mut response: Response| {
        if let Some(h) = header.clone() {
            response.headers_mut().insert(VERSION_HEADER, h);
        }
        response
    };
    let version = match versioned {
        Some((resource, path_major, path_minor, stripped)) => {
            if !majors(resource).is_some_and(|m| m.contains(&path_major)) {
                let message = format!("{resource} has no version v{path_major}");
                return echo(
                    ApiError::new(StatusCode::NOT_FOUND, "UNSUPPORTED_VERSION", message)
                        .into_response(),
                );
            }
            let stripped = if stripped.is_empty() { "/" } else { stripped };
            if let Some(uri) = with_path(req.uri(), stripped) {
                *req.uri_mut() = uri;
            }
            ApiVersion {
                major: path_major,
                minor: path_minor,
                from_path: true,
            }
        }
        None => {
            let live = resource_of(path).and_then(majors).unwrap_or(&[1]);
            if !live.contains(&major) {
                let message = format!(
                    "API version v{major} is not supported here; live: v{}",
                    live[0]
                );
                return echo(version_error(codes::UNSUPPORTED, &message).into_response());
            }
            ApiVersion {
                major,
                minor,
                from_path: false,
            }
        }
    };
    req.extensions_mut().insert(version);
    req.extensions_mut().insert(policy);
    echo(next.run(req).await)
}

impl<S: Send + Sync> FromRequestParts<S> for ApiVersion {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<ApiVersion>()
            .copied()
            .ok_or_else(ApiError::internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_strictly() {
        assert_eq!(parse_version("v1.0", true), Some((1, 0)));
        assert_eq!(parse_version("v2.13", true), Some((2, 13)));
        assert_eq!(parse_version("v1", true), None);
        assert_eq!(parse_version("v1", false), Some((1, 0)));
        for bad in [
            "1.0", "v1.", "v.1", "v1.0.0", "V1.0", "v-1.0", "v1.x", "v99999.0", "",
        ] {
            assert_eq!(parse_version(bad, true), None, "{bad}");
        }
    }

    #[test]
    fn path_versions_belong_to_known_resources() {
        assert_eq!(
            path_version("/orders/v2"),
            Some(("orders", 2, 0, "/orders"))
        );
        assert_eq!(
            path_version("/customers/me/orders/v1"),
            Some(("orders", 1, 0, "/customers/me/orders"))
        );
        assert_eq!(
            path_version("/products/v1"),
            Some(("products", 1, 0, "/products"))
        );
        assert_eq!(path_version("/products/abc/v1"), None);
        assert_eq!(path_version("/products"), None);
        assert_eq!(resource_of("/customers/me/orders"), Some("orders"));
    }
}
