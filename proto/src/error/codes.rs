//! The codes (an error body's `code`, a field violation's `code`) answered
//! from more than one place, by the kind they are answered as.

// Validation (422), and its field violations' codes.
pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
pub const REQUIRED: &str = "REQUIRED";
pub const INVALID_VALUE: &str = "INVALID_VALUE";
pub const INVALID_FORMAT: &str = "INVALID_FORMAT";
pub const OUT_OF_RANGE: &str = "OUT_OF_RANGE";
pub const TOO_LONG: &str = "TOO_LONG";
pub const UNSUPPORTED: &str = "UNSUPPORTED";
// A malformed request (400, and 415 at the edge).
pub const INVALID_FILTER: &str = "INVALID_FILTER";
pub const INVALID_QUERY_PARAMETER: &str = "INVALID_QUERY_PARAMETER";
pub const INVALID_SORT_FIELD: &str = "INVALID_SORT_FIELD";
pub const MALFORMED_JSON: &str = "MALFORMED_JSON";
pub const UNSUPPORTED_MEDIA_TYPE: &str = "UNSUPPORTED_MEDIA_TYPE";
// Not found (404).
pub const NOT_FOUND: &str = "NOT_FOUND";
// Conflict (409).
pub const CONCURRENT_MODIFICATION: &str = "CONCURRENT_MODIFICATION";
pub const CART_ORDERED: &str = "CART_ORDERED";
// Unavailable (503).
pub const CATALOG_UNAVAILABLE: &str = "CATALOG_UNAVAILABLE";
