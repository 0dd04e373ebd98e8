//! The document's shared components as clients read them: paged
//! envelopes naming their item type, content sections by type, and the
//! error body naming its cart.

use utoipa::openapi::{RefOr, Schema};

use crate::error::ErrorBody;

/// Each `Paged_X` envelope's `results` as a list of `X` by reference
/// rather than a copy of it (utoipa inlines a generic's argument): one
/// named type per resource for clients, and no component left unused.
pub(super) fn name_paged_items(components: &mut utoipa::openapi::Components) {
    let paged: Vec<String> = components
        .schemas
        .keys()
        .filter(|name| name.starts_with("Paged_"))
        .cloned()
        .collect();
    for name in paged {
        let item = &name["Paged_".len()..];
        let (Some(envelope), Some(named)) =
            (components.schemas.get(&name), components.schemas.get(item))
        else {
            continue;
        };
        let (Ok(mut envelope), Ok(named)) =
            (serde_json::to_value(envelope), serde_json::to_value(named))
        else {
            continue;
        };
        let Some(items) = envelope.pointer_mut("/properties/results/items") else {
            continue;
        };
        if *items != named {
            continue;
        }
        *items = serde_json::json!({ "$ref": format!("#/components/schemas/{item}") });
        if let Ok(schema) = serde_json::from_value(envelope) {
            components.schemas.insert(name, schema);
        }
    }
}

/// `Section`'s variants as named schemas (`LinksSection`, `TextSection`,
/// `ImageSection`), each with its one `type`, and `Section` a
/// `oneOf` of them with a discriminator on `type`: generators that cannot
/// read a `oneOf` of inline objects and `allOf`s (openapi-python-client
/// dropped every content answer) get one type per variant.
pub(super) fn name_content_sections(components: &mut utoipa::openapi::Components) {
    let Some(Ok(section)) = components.schemas.get("Section").map(serde_json::to_value) else {
        return;
    };
    let Some(variants) = section.get("oneOf").and_then(|v| v.as_array()) else {
        return;
    };
    let mut named = Vec::new();
    for variant in variants {
        let mut variant = variant.clone();
        // The object that states `type`: the variant, or its `allOf` part.
        let typed = match variant.get_mut("allOf").and_then(|all| all.as_array_mut()) {
            Some(parts) => parts
                .iter_mut()
                .find(|p| p.pointer("/properties/type").is_some()),
            None => Some(&mut variant),
        };
        // (A one-value `enum`: utoipa's schema model keeps no `const`.)
        let Some(kind) = typed.and_then(|object| {
            Some(
                object
                    .pointer("/properties/type/enum/0")?
                    .as_str()?
                    .to_string(),
            )
        }) else {
            return;
        };
        let Some(first) = kind.chars().next() else {
            return;
        };
        let rest = &kind[first.len_utf8()..];
        let name = format!("{}{rest}Section", first.to_ascii_uppercase());
        named.push((kind, name, variant));
    }
    let refs: Vec<_> = named
        .iter()
        .map(|(_, name, _)| serde_json::json!({ "$ref": format!("#/components/schemas/{name}") }))
        .collect();
    let mapping: serde_json::Map<_, _> = named
        .iter()
        .map(|(kind, name, _)| (kind.clone(), format!("#/components/schemas/{name}").into()))
        .collect();
    let mut by_type = serde_json::json!({
        "oneOf": refs,
        "discriminator": { "propertyName": "type", "mapping": mapping },
    });
    if let Some(description) = section.get("description") {
        by_type["description"] = description.clone();
    }
    let Ok(by_type) = serde_json::from_value(by_type) else {
        return;
    };
    for (_, name, schema) in named {
        if let Ok(schema) = serde_json::from_value(schema) {
            components.schemas.insert(name, schema);
        }
    }
    components.schemas.insert("Section".into(), by_type);
}

/// `ErrorBody`, its `cart` a `Cart`, its `checkoutSession` a
/// `CheckoutSession` and its `payment` a `Payment` (the error module sits
/// below the models, so it cannot name them).
pub(super) fn error_body_schema() -> RefOr<Schema> {
    let plain = <ErrorBody as utoipa::PartialSchema>::schema();
    let Ok(mut schema) = serde_json::to_value(&plain) else {
        return plain;
    };
    for (property, model) in [
        ("cart", "Cart"),
        ("checkoutSession", "CheckoutSession"),
        ("payment", "Payment"),
    ] {
        if let Some(value) = schema.pointer_mut(&format!("/properties/{property}")) {
            let description = value.get("description").cloned();
            *value = serde_json::json!({"oneOf": [
                {"$ref": format!("#/components/schemas/{model}"), "description": description},
                {"type": "null"},
            ]});
        }
    }
    serde_json::from_value(schema).unwrap_or(plain)
}
