//! The OpenAPI 3.1 document, generated from the route annotations and
//! completed here with what every operation shares: the version and
//! correlation headers, and the errors any request can meet.

mod examples;
mod idempotency;
mod links;
mod params;
mod patterns;
mod schemas;
pub mod settings;
mod tags;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use utoipa::openapi::path::{Operation, Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, HeaderBuilder, ObjectBuilder, OpenApi, Ref, RefOr, Required, Type,
};

use crate::error::FieldError;
use crate::policy::{Caching, Policies};
use crate::state::AppState;

const DESCRIPTION: &str = include_str!("description.md");

/// Errors any versioned operation can answer, beyond its own.
const COMMON_ERRORS: &[(&str, &str)] = &[
    (
        "400",
        "INVALID_API_VERSION: X-Api-Version missing, malformed or not a live major version; INVALID_PATH: the path is not UTF-8 text once decoded; INVALID_QUERY_PARAMETER: a query parameter not UTF-8 text or with control characters (INVALID_FORMAT), over 1 KiB (OUT_OF_RANGE), or given twice (DUPLICATE; only sort repeats)",
    ),
    (
        "414",
        "URI_TOO_LONG: a path over 2 KiB or a query string over 8 KiB",
    ),
    (
        "431",
        "HEADERS_TOO_LARGE: a header value over 8 KiB, or headers over 32 KiB together",
    ),
    (
        "404",
        "No such resource, or UNSUPPORTED_VERSION for a path version the resource does not have",
    ),
    (
        "405",
        "Method not allowed on this path; the `Allow` header lists the allowed ones",
    ),
    (
        "429",
        "RATE_LIMIT_EXCEEDED: over a budget (client IP, session, search, login); Retry-After says when to retry, RateLimit-Policy and RateLimit describe the budgets",
    ),
    ("500", "Internal error (never a stack trace)"),
    ("502", "A downstream service returned an invalid response"),
    (
        "503",
        "Temporarily unavailable, with Retry-After: SERVICE_UNAVAILABLE (a downstream unreachable), CIRCUIT_OPEN (its calls paused after repeated failures) or DOWNSTREAM_BUSY (as many calls in flight to it as allowed; this one was shed)",
    ),
    ("504", "A downstream service did not respond in time"),
];

/// Of `COMMON_ERRORS`, the answers of the edge's request checks, which
/// every path gives (the others are a versioned resource's).
const EDGE_REFUSALS: &[&str] = &["405", "414", "431"];

fn string_schema(pattern: Option<&str>, format: Option<&str>) -> ObjectBuilder {
    let mut b = ObjectBuilder::new().schema_type(Type::String);
    if let Some(p) = pattern {
        b = b.pattern(Some(p));
    }
    if let Some(f) = format {
        b = b.format(Some(utoipa::openapi::SchemaFormat::Custom(f.to_string())));
    }
    b
}

fn header_param(name: &str, required: bool, description: &str, schema: ObjectBuilder) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(if required {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// The 401 of every operation that needs an X-BFF-Token.
const CUSTOMER_TOKEN_REFUSED: &str = "No, invalid, expired or revoked X-BFF-Token";

/// Whether `op`'s security names the customer token (`BFFToken`).
fn needs_customer_token(op: &Operation) -> bool {
    op.security.iter().flatten().any(|requirement| {
        serde_json::to_value(requirement).is_ok_and(|value| value.get("BFFToken").is_some())
    })
}

fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
}

/// Public reads: `If-None-Match` in, validators out, 304 possible.
fn cacheable(op: &mut Operation) {
    let params = op.parameters.get_or_insert_with(Vec::new);
    params.push(RefOr::T(header_param(
        "If-None-Match",
        false,
        "ETags held; a match answers 304 Not Modified",
        string_schema(None, None),
    )));
    let not_modified = ResponseBuilder::new()
        .description("Not Modified: the ETag sent is current")
        .build();
    op.responses
        .responses
        .insert("304".to_string(), RefOr::T(not_modified));
    if let Some(RefOr::T(ok)) = op.responses.responses.get_mut("200") {
        for (name, description) in [
            ("ETag", "A strong validator of the representation"),
            (
                "Cache-Control",
                "public, max-age=..., stale-while-revalidate=... (per resource group)",
            ),
            ("Vary", "X-Api-Version"),
        ] {
            let header = HeaderBuilder::new()
                .schema(Some(string_schema(None, None)))
                .description(Some(description))
                .build();
            ok.headers.insert(name.to_string(), RefOr::T(header));
        }
    }
}

fn decorate(op: &mut Operation, versioned: bool) {
    // Any value is accepted: a UUID is echoed, anything else replaced by a
    // fresh one, so the schema promises no format.
    let correlation = header_param(
        "Correlation-Id",
        false,
        "A UUID for tracing: echoed when it is one; absent or anything else gets a fresh UUID",
        string_schema(None, None),
    );
    let params = op.parameters.get_or_insert_with(Vec::new);
    for param in params.iter_mut() {
        if let RefOr::T(param) = param {
            params::bound_raw_text(param);
        }
    }
    if versioned {
        params.push(RefOr::T(header_param(
            "X-Api-Version",
            true,
            "API version v<major>.<minor>, e.g. v1.0; echoed in the response",
            string_schema(Some(r"^v\d+\.\d+$"), None),
        )));
        for (status, description) in COMMON_ERRORS {
            op.responses
                .responses
                .entry((*status).to_string())
                .or_insert_with(|| RefOr::T(error_response(description)));
        }
    } else {
        // Probes, the document and providers' routes pass the edge's
        // request checks too; a path with a parameter, its text check.
        let edge = COMMON_ERRORS
            .iter()
            .filter(|(status, _)| EDGE_REFUSALS.contains(status));
        for (status, description) in edge {
            op.responses
                .responses
                .entry((*status).to_string())
                .or_insert_with(|| RefOr::T(error_response(description)));
        }
        let in_path = params
            .iter()
            .any(|p| matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Path));
        if in_path {
            op.responses
                .responses
                .entry("400".to_string())
                .or_insert_with(|| {
                    RefOr::T(error_response(
                        "INVALID_PATH: the path is not UTF-8 text once decoded",
                    ))
                });
        }
    }
    // No security named is no customer token needed, said so (an operation
    // without the key reads as "unspecified" to linters and generators).
    op.security.get_or_insert_with(Vec::new);
    let has_path_ids = params
        .iter()
        .any(|p| matches!(p, RefOr::T(p) if p.parameter_in == ParameterIn::Path));
    if has_path_ids {
        params::document_path_id_refusal(op);
    }
    let params = op.parameters.get_or_insert_with(Vec::new);
    params.push(RefOr::T(correlation));
    if op.request_body.is_some() {
        for (status, description) in BODY_ERRORS {
            op.responses
                .responses
                .entry((*status).to_string())
                .or_insert_with(|| RefOr::T(error_response(description)));
        }
    }
    // Every operation that needs a customer's token can be refused for it;
    // one that says more (login, refresh) keeps its own words.
    if needs_customer_token(op) {
        op.responses
            .responses
            .entry("401".to_string())
            .or_insert_with(|| RefOr::T(error_response(CUSTOMER_TOKEN_REFUSED)));
    }
    for response in op.responses.responses.values_mut() {
        let RefOr::T(response) = response else {
            continue;
        };
        let id = HeaderBuilder::new()
            .schema(Some(string_schema(None, Some("uuid"))))
            .description(Some("The request's correlation id"))
            .build();
        response
            .headers
            .insert("Correlation-Id".to_string(), RefOr::T(id));
        if versioned {
            for (name, pattern, description) in VERSIONED_RESPONSE_HEADERS {
                let header = HeaderBuilder::new()
                    .schema(Some(string_schema(Some(pattern), None)))
                    .description(Some(*description))
                    .build();
                response
                    .headers
                    .insert((*name).to_string(), RefOr::T(header));
            }
        }
    }
}

/// What any operation taking a body may answer about the body itself.
const BODY_ERRORS: &[(&str, &str)] = &[
    ("413", "PAYLOAD_TOO_LARGE: the body is over 1 MiB"),
    (
        "415",
        "UNSUPPORTED_MEDIA_TYPE: a body not sent as Content-Type: application/json",
    ),
];

/// Headers a versioned answer may carry, each in the one form it takes
/// (so a generated-request run checks every route's headers against it).
const VERSIONED_RESPONSE_HEADERS: &[(&str, &str, &str)] = &[
    (
        "X-Api-Version",
        r"^v\d+\.\d+$",
        "The request's X-Api-Version, echoed",
    ),
    (
        "RateLimit-Policy",
        r#"^"[a-z-]+";q=\d+;w=\d+(, "[a-z-]+";q=\d+;w=\d+)*$"#,
        "Every budget the request counted against (IETF RateLimit headers); absent when no limit applies",
    ),
    (
        "RateLimit",
        r#"^"[a-z-]+";r=\d+;t=\d+$"#,
        "The tightest of those budgets: requests remaining and seconds until it is whole",
    ),
    (
        "Retry-After",
        r"^[1-9]\d*$",
        "Whole seconds to wait before retrying (429 and 503 answers)",
    ),
];

/// Adds the shared headers, errors, schemas and security schemes, and
/// what `settings` say of the shop (servers, contact, license).
pub fn complete(
    doc: &mut OpenApi,
    settings: &settings::DocumentSettings,
    idempotency_ttl: std::time::Duration,
) {
    doc.info.title = "Storefront BFF".to_string();
    doc.info.version = "1.0".to_string();
    doc.info.description = Some(DESCRIPTION.to_string());
    settings.apply(doc);
    tags::describe(doc);
    examples::apply(doc);
    let policies = Policies::default();
    for (path, item) in doc.paths.paths.iter_mut() {
        let route = policies.of(path);
        let versioned = !route.operational;
        if let Some(get) = item.get.as_mut()
            && matches!(route.caching, Caching::Public(_))
        {
            cacheable(get);
        }
        if route.idempotent {
            let mutating = [
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for op in mutating.into_iter().flatten() {
                idempotency::document(op, idempotency_ttl);
            }
        }
        for op in [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            decorate(op, versioned);
        }
    }
    // Bodies utoipa cannot mark optional without also admitting `null`.
    for path in ["/carts", "/checkout/{sessionId}/payment"] {
        if let Some(RefOr::T(body)) = doc
            .paths
            .paths
            .get_mut(path)
            .and_then(|i| i.post.as_mut())
            .and_then(|op| op.request_body.as_mut())
        {
            body.required = Some(Required::False);
        }
    }
    links::add(doc);
    patterns::complete(doc);
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .schemas
        .insert("ErrorBody".into(), schemas::error_body_schema());
    schemas::name_paged_items(components);
    schemas::name_content_sections(components);
    components.schemas.insert(
        "FieldError".into(),
        <FieldError as utoipa::PartialSchema>::schema(),
    );
    components.security_schemes.insert(
        "BFFToken".into(),
        RefOr::T(SecurityScheme::ApiKey(ApiKey::Header(
            ApiKeyValue::with_description(
                "X-BFF-Token",
                "Customer session JWT from POST /auth/login",
            ),
        ))),
    );
}

/// The contract itself.
#[utoipa::path(get, path = "/openapi.json", tag = "Health",
    responses((status = 200, description = "This OpenAPI 3.1 document", content_type = "application/json")))]
pub async fn document(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.openapi.clone(),
    )
}
