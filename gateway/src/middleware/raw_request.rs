//! What every request's path and query must be before any route reads
//! them: once percent-decoded, UTF-8 text without control characters (a
//! lossy decoding would turn bad bytes into replacement characters that
//! look like a valid, unmatched value), and no query parameter given twice
//! except `sort` (which is repeatable): a repeated `limit` or filter is
//! ambiguous, so it is refused rather than guessed. 400 in the spec's
//! shape, naming the parameter. An empty value is refused too (leave the
//! parameter out for its default). Sizes are bounded too: a path or query
//! string over its limit is 414, a parameter value over 1 KiB is 400.

use std::collections::HashSet;
use storefront_proto::error::codes;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode;

use crate::error::ApiError;
use crate::query::invalid_parameter;

/// Parameters that may be given more than once.
const REPEATABLE: &[&str] = &["sort"];
pub const MAX_PATH_BYTES: usize = 2 * 1024;
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// One decoded parameter value at most (search text is held to less).
pub const MAX_VALUE_BYTES: usize = 1024;

fn too_long(what: &str, limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::URI_TOO_LONG,
        "URI_TOO_LONG",
        format!("the {what} is longer than {limit} bytes"),
    )
}

/// `raw` percent-decoded (`+` as a space), if it is text.
fn text(raw: &str) -> Option<String> {
    let spaced = raw.replace('+', " ");
    let decoded = percent_decode(spaced.as_bytes()).decode_utf8().ok()?;
    (!decoded.chars().any(char::is_control)).then(|| decoded.into_owned())
}

pub(crate) fn check_query(query: &str) -> Result<(), ApiError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(too_long("query string", MAX_QUERY_BYTES));
    }
    let mut seen = HashSet::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(key) = text(raw_key) else {
            return Err(invalid_parameter(
                "query",
                codes::INVALID_FORMAT,
                "a query parameter name is not valid text".into(),
            ));
        };
        let Some(value) = text(raw_value) else {
            return Err(invalid_parameter(
                &key,
                codes::INVALID_FORMAT,
                format!("{key} is not valid UTF-8 text (or has control characters)"),
            ));
        };
        if value.is_empty() {
            return Err(invalid_parameter(
                &key,
                codes::INVALID_FORMAT,
                format!("{key} is empty; leave it out for its default"),
            ));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(invalid_parameter(
                &key,
                codes::OUT_OF_RANGE,
                format!("{key} is longer than {MAX_VALUE_BYTES} bytes"),
            ));
        }
        if !REPEATABLE.contains(&key.as_str()) && !seen.insert(key.clone()) {
            return Err(invalid_parameter(
                &key,
                "DUPLICATE",
                format!("{key} is given more than once"),
            ));
        }
    }
    Ok(())
}

pub async fn require_text(req: Request, next: Next) -> Response {
    let uri = req.uri();
    if uri.path().len() > MAX_PATH_BYTES {
        return too_long("path", MAX_PATH_BYTES).into_response();
    }
    if text(uri.path()).is_none() {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "INVALID_PATH",
            "the path is not valid UTF-8 text once decoded",
        )
        .into_response();
    }
    if let Some(query) = uri.query()
        && let Err(e) = check_query(query)
    {
        return e.into_response();
    }
    next.run(req).await
}
