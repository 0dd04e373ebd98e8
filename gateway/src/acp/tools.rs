//! The MCP tools (docs/agents.md): the protocol's five checkout tools of
//! its MCP binding (`docs/mcp-binding.md`: arguments `{meta, id,
//! payload}`, `payload` the REST body, `meta` its headers) and three read
//! tools an assistant needs first (search, a product, the categories).
//! Each call is the REST request it stands for, made in process through
//! the whole edge (auth, signature, idempotency, rate limits), so that a
//! tool does nothing the REST API would not. Input schemas are the
//! protocol's own, bundled (no `$ref` left) from its JSON schema.

use std::sync::{Arc, LazyLock};

use axum::http::Method;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

/// The protocol's JSON schema bundle (Apache-2.0, 2026-04-17).
const SCHEMA: &str = include_str!("../../assets/acp/schema.agentic_checkout.json");
/// The most a search tool answers.
const MAX_RESULTS: u64 = 20;

/// `$ref`s to `#/$defs/X` replaced by X, recursively; a definition met
/// again inside itself becomes `{}` (any), so a cycle cannot recurse.
fn bundled(value: &Value, defs: &Map<String, Value>, path: &mut Vec<String>) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref")
                && let Some(name) = target.strip_prefix("#/$defs/")
            {
                if path.iter().any(|p| p == name) {
                    return json!({});
                }
                let Some(def) = defs.get(name) else {
                    return json!({});
                };
                path.push(name.to_string());
                let inlined = bundled(def, defs, path);
                path.pop();
                return inlined;
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), bundled(v, defs, path)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| bundled(v, defs, path)).collect()),
        other => other.clone(),
    }
}

fn definition(name: &str) -> Value {
    static DEFS: LazyLock<Map<String, Value>> = LazyLock::new(|| {
        let bundle: Value = serde_json::from_str(SCHEMA).unwrap_or_default();
        bundle
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    });
    let reference = json!({"$ref": format!("#/$defs/{name}")});
    bundled(&reference, &DEFS, &mut Vec::new())
}

fn meta_schema() -> Value {
    json!({
        "type": "object",
        "description": "The protocol's headers: api_version (required, e.g. 2026-04-17), idempotency_key (recommended for create and complete), request_id, signature and timestamp (an agent that signs: over the REST request this call stands for, its body the payload as canonical JSON, keys sorted, no spaces)",
        "properties": {
            "api_version": {"type": "string"},
            "idempotency_key": {"type": "string", "maxLength": 255},
            "request_id": {"type": "string"},
            "signature": {"type": "string"},
            "timestamp": {"type": "string"},
            "accept_language": {"type": "string"},
            "user_agent": {"type": "string"}
        },
        "required": ["api_version"],
        "additionalProperties": true
    })
}

fn object(properties: Value, required: &[&str]) -> Arc<Map<String, Value>> {
    let schema = json!({"type": "object", "properties": properties, "required": required});
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

/// The tools, their input schemas bundled once.
pub fn all() -> Vec<Tool> {
    let checkout = |name: &'static str,
                    text: &'static str,
                    payload: Option<&str>,
                    with_id: bool,
                    payload_required: bool| {
        let mut properties = json!({"meta": meta_schema()});
        let mut required = vec!["meta"];
        if with_id {
            properties["id"] =
                json!({"type": "string", "description": "The checkout session's id"});
            required.push("id");
        }
        if let Some(def) = payload {
            properties["payload"] = definition(def);
            if payload_required {
                required.push("payload");
            }
        }
        Tool::new(name, text, object(properties, &required))
    };
    vec![
        checkout(
            "create_checkout_session",
            "Create a checkout session from items (id {productId}:{variantId}, as search_products and get_product show them), with or without a fulfillment address",
            Some("CheckoutSessionCreateRequest"),
            false,
            true,
        ),
        checkout(
            "get_checkout_session",
            "The checkout session as it stands",
            None,
            true,
            false,
        ),
        checkout(
            "update_checkout_session",
            "Update a checkout session: its items (the whole list), fulfillment address, or chosen fulfillment option",
            Some("CheckoutSessionUpdateRequest"),
            true,
            true,
        ),
        checkout(
            "complete_checkout_session",
            "Pay with a delegated payment token and place the order",
            Some("CheckoutSessionCompleteRequest"),
            true,
            true,
        ),
        checkout(
            "cancel_checkout_session",
            "Cancel a checkout session; the items it held go back on sale",
            Some("CancelSessionRequest"),
            true,
            false,
        ),
        Tool::new(
            "search_products",
            "Search the shop's catalog: products with their item ids, prices and whether they are in stock",
            object(
                json!({
                    "query": {"type": "string", "minLength": 1, "maxLength": 200},
                    "currency": {"type": "string", "description": "ISO 4217: the prices shown (the shop's first market's by default)"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS}
                }),
                &["query"],
            ),
        ),
        Tool::new(
            "get_product",
            "One product with every variant: its item id, options, prices and how many are available",
            object(
                json!({
                    "id": {"type": "string", "description": "The product's id"},
                    "currency": {"type": "string"}
                }),
                &["id"],
            ),
        ),
        Tool::new(
            "list_categories",
            "The shop's categories as a tree",
            object(json!({}), &[]),
        ),
    ]
}

/// The REST request a tool call stands for.
pub struct Call {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<Vec<u8>>,
    /// A read tool's answer is shown compact.
    pub read: Option<fn(Value) -> Value>,
}

/// Keys sorted (however the map keeps them), no spaces: what a signing
/// agent signs as the body.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn text<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// RFC 3986's unreserved characters stay as they are: a signing agent
/// signs the path as it names the session.
const ENCODED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

fn encoded(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, ENCODED).to_string()
}

/// The call of tool `name` with `args`; Err names what is missing.
pub fn call(name: &str, args: &Map<String, Value>) -> Result<Call, String> {
    let id = || text(args, "id").map(encoded).ok_or("id is required");
    let currency = text(args, "currency")
        .map(|c| format!("&currency={}", encoded(c)))
        .unwrap_or_default();
    let read = |path: String, shown: fn(Value) -> Value| Call {
        method: Method::GET,
        path,
        headers: vec![("x-api-version", "v1.0".into())],
        body: None,
        read: Some(shown),
    };
    let (method, path) = match name {
        "create_checkout_session" => (Method::POST, "/acp/checkout_sessions".to_string()),
        "get_checkout_session" => (Method::GET, format!("/acp/checkout_sessions/{}", id()?)),
        "update_checkout_session" => (Method::POST, format!("/acp/checkout_sessions/{}", id()?)),
        "complete_checkout_session" => (
            Method::POST,
            format!("/acp/checkout_sessions/{}/complete", id()?),
        ),
        "cancel_checkout_session" => (
            Method::POST,
            format!("/acp/checkout_sessions/{}/cancel", id()?),
        ),
        "search_products" => {
            let query = text(args, "query").ok_or("query is required")?;
            let limit = args
                .get("limit")
                .and_then(Value::as_u64)
                .unwrap_or(10)
                .clamp(1, MAX_RESULTS);
            return Ok(read(
                format!("/search?query={}&limit={limit}{currency}", encoded(query)),
                super::shown::search,
            ));
        }
        "get_product" => {
            return Ok(read(
                format!("/products/{}?{}", id()?, currency.trim_start_matches('&')),
                super::shown::product,
            ));
        }
        "list_categories" => return Ok(read("/categories/tree".into(), |tree| tree)),
        _ => return Err(format!("no tool {name}")),
    };
    let meta = args
        .get("meta")
        .and_then(Value::as_object)
        .ok_or("meta is required")?;
    let mut headers = vec![(
        "api-version",
        text(meta, "api_version")
            .ok_or("meta.api_version is required")?
            .to_string(),
    )];
    for (field, header) in [
        ("request_id", "request-id"),
        ("signature", "signature"),
        ("timestamp", "timestamp"),
        ("accept_language", "accept-language"),
    ] {
        if let Some(value) = text(meta, field) {
            headers.push((header, value.to_string()));
        }
    }
    let body = (method == Method::POST).then(|| {
        let payload = args.get("payload").cloned().unwrap_or_else(|| json!({}));
        serde_json::to_vec(&canonical(&payload)).unwrap_or_default()
    });
    if method == Method::POST {
        // Recommended, not required, by the binding: without one a retry
        // is a new request.
        let key = text(meta, "idempotency_key")
            .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string);
        headers.push(("idempotency-key", key));
        headers.push(("content-type", "application/json".into()));
    }
    Ok(Call {
        method,
        path,
        headers,
        body,
        read: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No `$ref` is left for an MCP client to resolve.
    #[test]
    fn input_schemas_are_bundled() {
        for tool in all() {
            let text = serde_json::to_string(&*tool.input_schema).unwrap();
            assert!(!text.contains("$ref"), "{}", tool.name);
        }
        let create = all()
            .into_iter()
            .find(|t| t.name == "create_checkout_session")
            .unwrap();
        let payload = &create.input_schema["properties"]["payload"];
        assert!(payload["properties"]["line_items"].is_object(), "{payload}");
    }

    #[test]
    fn a_call_is_its_rest_request_with_the_payload_canonical() {
        let args = json!({"meta": {"api_version": "2026-04-17", "idempotency_key": "k"}, "id": "cs_1", "payload": {"b": 1, "a": {"d": 2, "c": 3}}});
        let call = call("update_checkout_session", args.as_object().unwrap()).unwrap();
        assert_eq!(
            (call.method, call.path.as_str()),
            (Method::POST, "/acp/checkout_sessions/cs_1")
        );
        assert_eq!(call.body.unwrap(), br#"{"a":{"c":3,"d":2},"b":1}"#);
        assert!(call.headers.contains(&("idempotency-key", "k".to_string())));
        let missing = json!({"id": "cs_1"});
        assert!(super::call("get_checkout_session", missing.as_object().unwrap()).is_err());
    }
}
