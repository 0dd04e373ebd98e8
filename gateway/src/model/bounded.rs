//! Strings a client sends, bounded where they are read: an id, code, key
//! or slug ([`Id`]) is 1 to `MAX_ID_CHARS` characters of text without
//! control characters. The type carries both the rule (its `Deserialize`)
//! and its description (its schema), so the document states what is
//! enforced; a body field of the wrong length is refused by the JSON
//! reader as a 422 `TOO_LONG` naming the field, before any call.

use std::borrow::Cow;
use storefront_proto::error::codes;

use serde::{Deserialize, Deserializer};
use storefront_proto::names::MAX_ID_CHARS;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// A field-level refusal raised while deserialising: `CODE: message`. The
/// JSON reader (`json_body::parse`) turns it into the field's error entry;
/// serde's own messages are lower case and never take this form.
pub fn field_error<E: serde::de::Error>(code: &str, message: impl std::fmt::Display) -> E {
    E::custom(format!("{code}: {message}"))
}

/// Reads a `CODE: message` that [`field_error`] wrote.
pub fn read_field_error(text: &str) -> Option<(&str, &str)> {
    let (code, message) = text.split_once(": ")?;
    let is_code = !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
    is_code.then_some((code, message))
}

/// An id, code, key or slug as a client sends it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Id(pub String);

impl Id {
    pub fn into_inner(self) -> String {
        self.0
    }

    /// Whether `value` may be an id: why not, if it may not.
    pub fn check(value: &str) -> Result<(), (&'static str, String)> {
        if value.is_empty() {
            Err((codes::REQUIRED, "must not be empty".into()))
        } else if value.chars().count() > MAX_ID_CHARS {
            Err((
                codes::TOO_LONG,
                format!("must be at most {MAX_ID_CHARS} characters"),
            ))
        } else if value.chars().any(char::is_control) {
            Err((
                codes::INVALID_FORMAT,
                "must not contain control characters".into(),
            ))
        } else {
            Ok(())
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        match Id::check(&value) {
            Ok(()) => Ok(Id(value)),
            Err((code, message)) => Err(field_error(code, message)),
        }
    }
}

/// The schema of an [`Id`]: what its `Deserialize` enforces.
pub fn id_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(MAX_ID_CHARS))
        .pattern(Some(crate::query::schema::NO_CONTROL_CHARACTERS))
}

impl utoipa::PartialSchema for Id {
    fn schema() -> RefOr<Schema> {
        id_schema()
            .description(Some(format!(
                "An id, code, key or slug: 1 to {MAX_ID_CHARS} characters, no control characters"
            )))
            .into()
    }
}

impl utoipa::ToSchema for Id {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Id")
    }
}

/// A discount code as a shopper types it
/// (`storefront_proto::names::is_discount_code`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscountCode(pub String);

impl<'de> Deserialize<'de> for DiscountCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = String::deserialize(d)?;
        if storefront_proto::names::is_discount_code(&value) {
            return Ok(DiscountCode(value));
        }
        let message = format!(
            "a discount code is 1 to {} ASCII letters, digits, '-', '_' or '.'",
            storefront_proto::names::MAX_CODE_CHARS
        );
        Err(field_error(codes::INVALID_FORMAT, message))
    }
}

impl utoipa::PartialSchema for DiscountCode {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(storefront_proto::names::MAX_CODE_CHARS))
            .pattern(Some(storefront_proto::names::CODE_PATTERN))
            .description(Some(
                "A discount code: ASCII letters, digits, '-', '_' or '.', compared without case",
            ))
            .into()
    }
}

impl utoipa::ToSchema for DiscountCode {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("DiscountCode")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_bounded_text() {
        let ok: Id = serde_json::from_str(r#""p-1""#).unwrap();
        assert_eq!(ok.0, "p-1");
        let at_limit = format!("\"{}\"", "é".repeat(MAX_ID_CHARS));
        assert!(
            serde_json::from_str::<Id>(&at_limit).is_ok(),
            "characters, not bytes"
        );
        let over = format!("\"{}\"", "x".repeat(MAX_ID_CHARS + 1));
        let e = serde_json::from_str::<Id>(&over).unwrap_err().to_string();
        assert_eq!(
            read_field_error(&e).map(|(c, _)| c),
            Some("TOO_LONG"),
            "{e}"
        );
        let e = serde_json::from_str::<Id>(r#""a\u0000""#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            read_field_error(&e).map(|(c, _)| c),
            Some("INVALID_FORMAT"),
            "{e}"
        );
        let e = serde_json::from_str::<Id>(r#""""#).unwrap_err().to_string();
        assert_eq!(
            read_field_error(&e).map(|(c, _)| c),
            Some("REQUIRED"),
            "{e}"
        );
        assert_eq!(
            read_field_error("invalid type: integer `1`, expected a string"),
            None
        );
    }
}
