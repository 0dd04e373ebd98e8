//! Cross-cutting concerns, each once, as tower/axum middleware: the call
//! context (correlation id, route deadline), observation (span, access log,
//! metrics), API versions, JSON-only bodies, and the error normaliser that
//! makes sure nothing but the error shape ever leaves the gateway.

pub mod caching;
pub mod call_context;
pub mod errors;
pub mod header_size;
pub mod idempotency;
pub mod idempotency_allowance;
pub mod json_body;
pub mod observe;
pub mod path_ids;
pub mod raw_request;
pub mod version;
