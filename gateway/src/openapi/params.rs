//! What the document says of path and query parameters: the bounds the
//! raw-request checks hold every value to, and the 422 of a path
//! parameter that cannot be an id.

use storefront_proto::names::MAX_ID_CHARS;
use utoipa::openapi::RefOr;
use utoipa::openapi::path::{Operation, Parameter, ParameterIn};
use utoipa::openapi::schema::Type;

use super::error_response;
use crate::query::schema::NO_CONTROL_CHARACTERS;

/// The 422 of a path parameter that cannot be an id (`middleware::path_ids`).
pub(super) fn document_path_id_refusal(op: &mut Operation) {
    let refusal = format!(
        "VALIDATION_ERROR with TOO_LONG (over {MAX_ID_CHARS} characters) or INVALID_FORMAT on a path parameter"
    );
    match op.responses.responses.get_mut("422") {
        Some(RefOr::T(response)) => {
            response.description = format!("{}; or {refusal}", response.description);
        }
        Some(RefOr::Ref(_)) => {}
        None => {
            op.responses
                .responses
                .insert("422".to_string(), RefOr::T(error_response(&refusal)));
        }
    }
}

/// What the raw-request checks hold every path and query value to (see
/// `middleware::raw_request`): text without control characters, 1 byte to
/// 1 KiB, and a path parameter at most `MAX_ID_CHARS` characters (see
/// `middleware::path_ids`); stated on each string parameter that does not
/// say more.
pub(super) fn bound_raw_text(param: &mut Parameter) {
    if !matches!(param.parameter_in, ParameterIn::Query | ParameterIn::Path) {
        return;
    }
    let Some(RefOr::T(schema)) = param.schema.as_mut() else {
        return;
    };
    let schema = match schema {
        utoipa::openapi::Schema::Object(object) => object,
        // A repeatable parameter (`sort`): each value is bounded.
        utoipa::openapi::Schema::Array(array) => match &mut array.items {
            utoipa::openapi::schema::ArrayItems::RefOrSchema(items) => match items.as_mut() {
                RefOr::T(utoipa::openapi::Schema::Object(object)) => object,
                _ => return,
            },
            _ => return,
        },
        _ => return,
    };
    let is_string = matches!(
        &schema.schema_type,
        utoipa::openapi::schema::SchemaType::Type(Type::String)
    );
    // A closed set of values (`sort`) is bounded by the set.
    if !is_string || schema.enum_values.is_some() {
        return;
    }
    if schema.pattern.is_none() && schema.enum_values.is_none() {
        schema.pattern = Some(NO_CONTROL_CHARACTERS.to_string());
    }
    if schema.max_length.is_none() {
        schema.max_length = Some(match param.parameter_in {
            // An id or slug (`middleware::path_ids`).
            ParameterIn::Path => MAX_ID_CHARS,
            _ => 1024,
        });
    }
    if schema.min_length.is_none() {
        schema.min_length = Some(1);
    }
}
