//! Cross-cutting concerns, each once, as tower/axum middleware: correlation
//! ids, API versions, JSON-only bodies, and the error normaliser that makes
//! sure nothing but SPEC 7.1 bodies ever leaves the gateway.

pub mod caching;
pub mod correlation;
pub mod errors;
pub mod header_size;
pub mod json_body;
pub mod raw_request;
pub mod version;
