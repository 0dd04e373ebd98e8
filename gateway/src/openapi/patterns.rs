//! Patterns the route annotations name by a placeholder (utoipa takes only
//! a literal), written here from the one definition the customers service
//! enforces (`storefront_platform::text`): `<name>` for names and address
//! lines, `<optional text>` for optional ones.

use utoipa::openapi::{OpenApi, RefOr, Schema};

use storefront_platform::text::{NAME_PATTERN, OPTIONAL_TEXT_PATTERN};

const PLACEHOLDERS: [(&str, &str); 2] = [
    ("<name>", NAME_PATTERN),
    ("<optional text>", OPTIONAL_TEXT_PATTERN),
];

/// Replaces every placeholder pattern of a component's properties.
pub fn complete(doc: &mut OpenApi) {
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    for schema in components.schemas.values_mut() {
        let RefOr::T(Schema::Object(object)) = schema else {
            continue;
        };
        for property in object.properties.values_mut() {
            let RefOr::T(Schema::Object(property)) = property else {
                continue;
            };
            let Some(pattern) = property.pattern.as_mut() else {
                continue;
            };
            if let Some((_, full)) = PLACEHOLDERS.iter().find(|(p, _)| p == pattern) {
                *pattern = (*full).to_string();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_placeholder_is_left_in_the_document() {
        let env =
            storefront_platform::env::EnvReader::from_pairs(std::iter::empty::<(&str, &str)>());
        let json = crate::openapi_json(&crate::GatewayConfig::from_env(&env).unwrap()).unwrap();
        for (placeholder, _) in PLACEHOLDERS {
            assert!(!json.contains(placeholder), "{placeholder} left");
        }
        assert!(json.contains(&serde_json::to_string(NAME_PATTERN).unwrap()[1..20]));
    }
}
