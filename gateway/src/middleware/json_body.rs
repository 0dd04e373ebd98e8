//! Request bodies are JSON: [`ApiJson`] refuses another Content-Type with 415
//! and turns every other JSON rejection into an error body. Handlers that
//! take a body take it through this extractor, so a wrong method on a path
//! is still a 405, not a 415.

use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use storefront_proto::error::codes;

use crate::error::ApiError;
use crate::model::bounded::read_field_error;

/// Request bodies above this are refused with 413.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

fn is_json(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

fn unsupported_media_type() -> ApiError {
    ApiError::for_status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
}

/// The body's bytes: 413 over the limit, 400 when it cannot be read.
async fn read<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE)
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::MALFORMED_JSON,
                "the request body could not be read",
            )
        }
    })
}

/// A JSON body whose every failure is an error body: 415 without a JSON
/// Content-Type, 413 over the limit, 400 `MALFORMED_JSON` for bytes that are
/// not JSON, 422 `VALIDATION_ERROR` naming the field for JSON of the wrong
/// shape.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !is_json(&req) {
            return Err(unsupported_media_type());
        }
        let bytes = read(req, state).await?;
        parse(&bytes).map(ApiJson)
    }
}

/// A body that may be empty (an action POST needs no body, and then no
/// Content-Type); when present it is JSON, checked like [`ApiJson`].
pub struct OptionalJson<T>(pub Option<T>);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let declared_json = is_json(&req);
        let bytes = read(req, state).await?;
        if bytes.is_empty() {
            return Ok(OptionalJson(None));
        }
        if !declared_json {
            return Err(unsupported_media_type());
        }
        parse(&bytes).map(|v| OptionalJson(Some(v)))
    }
}

/// Numbers as JSON Schema reads them: `37.0` is the integer 37 (serde
/// would refuse it for an integer field the document calls `integer`).
fn integral_floats_as_integers(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *n = serde_json::Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// Deserialises `bytes`, classifying failures: 400 for
/// what is not JSON, 422 naming each field of the wrong type.
/// Every body is a JSON object: serde would also read a struct from an
/// array of its fields in order, which no document describes.
/// Messages say what is wrong in the API's words, never the parser's, and
/// quote nothing the client sent.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, codes::MALFORMED_JSON, not_json(&e)))?;
    if !value.is_object() {
        let message = "the request body must be a JSON object";
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            codes::VALIDATION_ERROR,
            message,
        )
        .field("body", codes::INVALID_FORMAT, message));
    }
    integral_floats_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let (field, code, message) = refusal(path, &e.into_inner().to_string());
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            codes::VALIDATION_ERROR,
            format!("invalid field {field}"),
        )
        .field(field, code, message)
    })
}

fn not_json(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let at = format!("line {}, column {}", e.line(), e.column());
    match e.classify() {
        Category::Eof => "the request body ends before its JSON does".to_string(),
        // serde_json's only syntax error that is not about the text itself.
        Category::Syntax if e.to_string().starts_with("recursion limit") => {
            format!("the request body is nested too deeply ({at})")
        }
        _ => format!("the request body is not valid JSON ({at})"),
    }
}

/// The field, code and message of a deserialisation failure at `path`
/// (empty: the body itself), from serde's message.
fn refusal(path: String, serde: &str) -> (String, &'static str, String) {
    if let Some(missing) = serde
        .strip_prefix("missing field `")
        .and_then(|r| r.split('`').next())
    {
        let field = if path.is_empty() {
            missing.to_string()
        } else {
            format!("{path}.{missing}")
        };
        let message = format!("{field} is required");
        return (field, codes::REQUIRED, message);
    }
    let field = if path.is_empty() {
        "body".to_string()
    } else {
        path
    };
    if let Some((code, message)) = read_field_error(serde) {
        let code = match code {
            codes::TOO_LONG => codes::TOO_LONG,
            codes::INVALID_FORMAT => codes::INVALID_FORMAT,
            codes::REQUIRED => codes::REQUIRED,
            _ => codes::INVALID_VALUE,
        };
        let message = format!("{field} {message}");
        return (field, code, message);
    }
    let expected = serde.rsplit_once(", expected ").map(|(_, e)| e);
    let (code, message) = if serde.starts_with("invalid type") {
        let kind = expected.map_or("of another type", api_type);
        (codes::INVALID_FORMAT, format!("{field} must be {kind}"))
    } else if serde.starts_with("unknown variant") {
        let allowed = expected.unwrap_or_default().replace('`', "");
        (codes::INVALID_VALUE, format!("{field} must be {allowed}"))
    } else if let Some(kind) = expected.filter(|_| serde.starts_with("invalid value")) {
        (
            codes::INVALID_VALUE,
            format!("{field} must be {}", api_type(kind)),
        )
    } else {
        (
            codes::INVALID_VALUE,
            format!("{field} has a value that is not allowed"),
        )
    };
    (field, code, message)
}

/// A Rust type as serde names it (`u32`, `a sequence`), in JSON's words.
fn api_type(expected: &str) -> &'static str {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match expected {
        "a string" | "a character" => "a string",
        "a boolean" => "true or false",
        "a sequence" => "an array",
        "a map" => "an object",
        "usize" => "a non-negative integer",
        "isize" => "an integer",
        "f32" | "f64" => "a number",
        e if e.starts_with("struct ") => "an object",
        e if e.strip_prefix('u').is_some_and(digits) => "a non-negative integer",
        e if e.strip_prefix('i').is_some_and(digits) => "an integer",
        _ => "of another type",
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Line {
        quantity: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Body {
        line_items: Vec<Line>,
        note: String,
    }

    fn fails(json: &str) -> (u16, String, String) {
        let e = parse::<Body>(json.as_bytes()).unwrap_err();
        let f = e
            .errors
            .first()
            .map(|f| (f.field.clone(), f.code.clone()))
            .unwrap_or_default();
        (e.status.as_u16(), f.0, f.1)
    }

    #[test]
    fn failures_are_classified() {
        assert_eq!(
            parse::<Body>(b"{").unwrap_err().code.unwrap(),
            "MALFORMED_JSON"
        );
        assert_eq!(
            fails(r#"{"lineItems": []}"#),
            (422, "note".into(), "REQUIRED".into())
        );
        assert_eq!(
            fails(r#"{"lineItems": [{"quantity": "two"}], "note": ""}"#),
            (422, "lineItems[0].quantity".into(), "INVALID_FORMAT".into())
        );
        assert_eq!(
            fails(r#"{"lineItems": [{}], "note": ""}"#),
            (422, "lineItems[0].quantity".into(), "REQUIRED".into())
        );
        assert_eq!(
            fails(r#"{"lineItems": [{"quantity": -1}], "note": ""}"#),
            (422, "lineItems[0].quantity".into(), "INVALID_VALUE".into())
        );
        assert!(
            parse::<Body>(br#"{"lineItems": [{"quantity": 2}], "note": "x", "extra": 1}"#).is_ok()
        );
    }

    #[test]
    fn messages_are_the_api_s_words() {
        let e = parse::<Body>(br#"{"lineItems": [{"quantity": "two"}], "note": 1}"#).unwrap_err();
        assert_eq!(
            e.errors[0].message,
            "lineItems[0].quantity must be a non-negative integer"
        );
        let e = parse::<Body>(br#"{"lineItems": [], "note": 1}"#).unwrap_err();
        assert_eq!(e.errors[0].message, "note must be a string");
        let e = parse::<Body>(br#"{"lineItems": [{"quantity": -1}], "note": ""}"#).unwrap_err();
        assert_eq!(
            e.errors[0].message,
            "lineItems[0].quantity must be a non-negative integer"
        );
        let e = parse::<Body>(br#"{"lineItems": {}, "note": ""}"#).unwrap_err();
        assert_eq!(e.errors[0].message, "lineItems must be an array");
        let nested = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        let e = parse::<Body>(nested.as_bytes()).unwrap_err();
        assert!(
            e.message
                .starts_with("the request body is nested too deeply"),
            "{}",
            e.message
        );
        let e = parse::<Body>(b"{\"note\": tru").unwrap_err();
        assert!(!e.message.contains("expected"), "{}", e.message);
        assert!(!e.message.contains('`'), "{}", e.message);
    }

    /// Found by schemathesis: `[null, null]` updated a cart (serde reads a
    /// struct from an array of its fields), and `"quantity": 37.0`, an
    /// integer to JSON Schema, was refused.
    #[test]
    fn bodies_are_objects_and_integral_numbers_are_integers() {
        assert_eq!(
            fails(r#"["x", "y"]"#),
            (422, "body".into(), "INVALID_FORMAT".into())
        );
        assert_eq!(fails("null"), (422, "body".into(), "INVALID_FORMAT".into()));
        let body = parse::<Body>(br#"{"lineItems": [{"quantity": 37.0}], "note": ""}"#).unwrap();
        assert_eq!(body.line_items[0].quantity, 37);
        assert_eq!(
            fails(r#"{"lineItems": [{"quantity": 37.5}], "note": ""}"#),
            (422, "lineItems[0].quantity".into(), "INVALID_FORMAT".into())
        );
    }
}
