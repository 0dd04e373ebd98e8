//! Explicit filters (`minPrice=1000`) and structured ones
//! (`filter[createdAt[gte]]=2025-01-01`), both into proto `Filter`s.

use std::str::FromStr;
use storefront_proto::error::codes;

use axum::http::StatusCode;
use storefront_proto::Timestamp;
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{Filter, FilterOperator, FilterValue};

use crate::error::ApiError;

use super::invalid_parameter;
use super::spec::{CollectionSpec, Explicit, ExplicitKind, FieldKind};

fn filter(field: &str, op: FilterOperator, kind: Kind) -> Filter {
    Filter {
        field: field.to_string(),
        operator: op as i32,
        value: Some(FilterValue { kind: Some(kind) }),
    }
}

/// A value typed by its field kind, or the field-level error code and message.
fn typed(kind: FieldKind, raw: &str) -> Result<Kind, (&'static str, String)> {
    let invalid = |what: &str| {
        (
            codes::INVALID_VALUE,
            format!("expected {what}, got {raw:?}"),
        )
    };
    match kind {
        FieldKind::Text | FieldKind::Id | FieldKind::Attribute if raw.is_empty() => {
            Err(invalid("a non-empty value"))
        }
        FieldKind::Text | FieldKind::Id | FieldKind::Attribute => Ok(Kind::Text(raw.to_string())),
        FieldKind::Integer => raw
            .parse()
            .map(Kind::Integer)
            .map_err(|_| invalid("an integer")),
        FieldKind::Cents => match raw.parse::<i64>() {
            Ok(n) if n >= 0 => Ok(Kind::Integer(n)),
            Ok(_) => Err((
                codes::OUT_OF_RANGE,
                format!("expected an amount in cents of 0 or more, got {raw}"),
            )),
            Err(_) => Err(invalid("an integer amount in cents")),
        },
        FieldKind::Boolean => match raw {
            "true" => Ok(Kind::Boolean(true)),
            "false" => Ok(Kind::Boolean(false)),
            _ => Err(invalid("true or false")),
        },
        FieldKind::Timestamp => timestamp(raw)
            .map(Kind::Timestamp)
            .ok_or_else(|| invalid("an RFC 3339 timestamp or a date")),
        FieldKind::Enum(values) if values.contains(&raw) => Ok(Kind::Text(raw.to_string())),
        FieldKind::Enum(values) => Err(invalid(&format!("one of {}", values.join(", ")))),
    }
}

/// RFC 3339 (`2025-01-01T00:00:00Z`) or a plain date (midnight UTC).
pub fn timestamp(raw: &str) -> Option<Timestamp> {
    let is_date = raw.len() == 10 && raw.as_bytes()[4] == b'-' && raw.as_bytes()[7] == b'-';
    if is_date {
        return Timestamp::from_str(&format!("{raw}T00:00:00Z")).ok();
    }
    Timestamp::from_str(raw).ok()
}

pub fn explicit(spec: &Explicit, raw: &str) -> Result<Filter, ApiError> {
    let (op, kind) = match spec.kind {
        ExplicitKind::Equals(kind) => (FilterOperator::Eq, kind),
        ExplicitKind::Min => (FilterOperator::Gte, FieldKind::Cents),
        ExplicitKind::Max => (FilterOperator::Lte, FieldKind::Cents),
    };
    let value =
        typed(kind, raw).map_err(|(code, message)| invalid_parameter(spec.param, code, message))?;
    Ok(filter(spec.field, op, value))
}

/// At most `MAX_STRUCTURED_FILTERS` `filter[...]` parameters; explicit
/// filters come on top (each endpoint has a few, each given once).
pub fn check_count(structured: usize) -> Result<(), ApiError> {
    let max = storefront_domain::query::MAX_STRUCTURED_FILTERS;
    if structured <= max {
        return Ok(());
    }
    let message = format!("at most {max} filter[...] filters can be combined");
    Err(ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_FILTER,
        message.clone(),
    )
    .field("filter", codes::OUT_OF_RANGE, message))
}

fn invalid_filter(param: &str, code: &str, message: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_FILTER,
        format!("invalid filter {param}: {message}"),
    )
    .field(param, code, message)
}

fn operator(name: &str) -> Option<FilterOperator> {
    Some(match name {
        "eq" => FilterOperator::Eq,
        "ne" => FilterOperator::Ne,
        "gt" => FilterOperator::Gt,
        "gte" => FilterOperator::Gte,
        "lt" => FilterOperator::Lt,
        "lte" => FilterOperator::Lte,
        _ => return None,
    })
}

/// `filter[field]=v` or `filter[field[op]]=v`; `param` is the key as sent.
pub fn structured(param: &str, raw: &str, spec: &CollectionSpec) -> Result<Filter, ApiError> {
    let malformed = || {
        invalid_filter(
            param,
            codes::INVALID_FORMAT,
            "expected filter[field] or filter[field[op]]".into(),
        )
    };
    let inner = param
        .strip_prefix("filter[")
        .and_then(|rest| rest.strip_suffix(']'))
        .ok_or_else(malformed)?;
    let (field, op) = match inner.split_once('[') {
        None => (inner, "eq"),
        Some((field, rest)) => {
            let op = rest
                .strip_suffix(']')
                .filter(|op| !op.contains(['[', ']']))
                .ok_or_else(malformed)?;
            (field, op)
        }
    };
    // `attributes.colour`: the attributes field, by one attribute's name.
    let (field, attribute) = match field.split_once('.') {
        Some((field, name)) => (field, Some(name)),
        None => (field, None),
    };
    let declared = spec.filter_fields.iter().find(|(name, _)| *name == field);
    let Some(&(_, kind)) = declared.filter(|(_, kind)| {
        (*kind == FieldKind::Attribute) == attribute.is_some_and(|name| !name.is_empty())
    }) else {
        let fields: Vec<String> = (spec.filter_fields.iter())
            .map(|&(name, kind)| match kind {
                FieldKind::Attribute => format!("{name}.<attribute>"),
                _ => name.to_string(),
            })
            .collect();
        let message = format!(
            "cannot filter by {}; filterable fields: {}",
            filter_field(inner),
            fields.join(", ")
        );
        return Err(invalid_filter(param, codes::UNSUPPORTED, message));
    };
    let op = operator(op).ok_or_else(|| {
        invalid_filter(
            param,
            codes::UNSUPPORTED,
            format!("unknown operator {op:?}; use eq, ne, gt, gte, lt, lte"),
        )
    })?;
    if !kind.allows(op) {
        return Err(invalid_filter(
            param,
            codes::UNSUPPORTED,
            format!("{field} supports only eq and ne"),
        ));
    }
    let value = typed(kind, raw).map_err(|(code, message)| invalid_filter(param, code, message))?;
    let value = match (value, attribute) {
        (Kind::Text(value), Some(name)) => {
            Kind::Text(storefront_domain::catalog::attribute(name, &value))
        }
        (value, _) => value,
    };
    Ok(filter(field, op, value))
}

/// The field a refused `filter[...]` names, quoted, cut to 64 characters:
/// what is echoed of a client's parameter stays bounded.
fn filter_field(inner: &str) -> String {
    let field = inner.split('[').next().unwrap_or_default();
    match field.char_indices().nth(64) {
        Some((cut, _)) => format!("{:?}...", &field[..cut]),
        None => format!("{field:?}"),
    }
}
