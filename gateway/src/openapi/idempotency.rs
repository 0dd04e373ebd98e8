//! `Idempotency-Key` in the document: on every mutating operation whose
//! route policy honours it (`middleware::idempotency`), with its refusals,
//! the replay's header, and how long answers are kept.

use std::time::Duration;

use utoipa::openapi::path::Operation;
use utoipa::openapi::{HeaderBuilder, RefOr};

use super::{error_response, header_param, string_schema};

/// What a refusal of the key adds to each status.
const REFUSALS: [(&str, &str); 6] = [
    (
        "400",
        "INVALID_HEADER: Idempotency-Key is not 1 to 255 printable ASCII characters (bare, or a quoted structured-field string), or sent twice",
    ),
    (
        "401",
        "a replay to a token since logged out or revoked: TOKEN_REVOKED, never the kept answer",
    ),
    (
        "429",
        "RATE_LIMIT_EXCEEDED: a new Idempotency-Key past what this caller (IDEMPOTENCY_MAX_KEYS 1000 keys, IDEMPOTENCY_MAX_BYTES 8 MiB of answers) or its client network (IDEMPOTENCY_MAX_KEYS_NETWORK 10000, IDEMPOTENCY_MAX_BYTES_NETWORK 64 MiB) may keep over IDEMPOTENCY_TTL_SECS; Retry-After says when the window ends; repeats of kept keys still replay",
    ),
    (
        "409",
        "IDEMPOTENCY_KEY_IN_USE: a request with this Idempotency-Key is still running (Retry-After)",
    ),
    (
        "422",
        "IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used with another body",
    ),
    (
        "503",
        "IDEMPOTENCY_UNAVAILABLE: the key cannot be checked now (Retry-After)",
    ),
];

pub fn document(op: &mut Operation, ttl: Duration) {
    let description = format!(
        "Optional. Makes a retry safe: the first request with a key runs, and its answer (not a \
         5xx) is kept for {} s (IDEMPOTENCY_TTL_SECS) for this method, path and caller (the \
         token's subject, or the client's network); a repeat with the same body gets that answer \
         again with Idempotent-Replayed: true and Cache-Control: private, no-store. 1 to 255 printable ASCII characters, bare or a \
         quoted structured-field string",
        ttl.as_secs()
    );
    let schema = string_schema(None, None)
        .min_length(Some(1))
        .max_length(Some(257));
    let params = op.parameters.get_or_insert_with(Vec::new);
    params.push(RefOr::T(header_param(
        "Idempotency-Key",
        false,
        &description,
        schema,
    )));
    for (status, refusal) in REFUSALS {
        let entry = op.responses.responses.entry(status.to_string());
        let response = entry.or_insert_with(|| RefOr::T(error_response(refusal)));
        if let RefOr::T(response) = response
            && !response.description.contains(refusal)
        {
            response.description = format!("{}; {refusal}", response.description);
        }
    }
    for (status, response) in op.responses.responses.iter_mut() {
        if !status.starts_with('2') {
            continue;
        }
        if let RefOr::T(response) = response {
            let replayed = HeaderBuilder::new()
                .schema(Some(string_schema(Some("^true$"), None)))
                .description(Some(
                    "Present on a repeat of an Idempotency-Key: this is the first request's answer",
                ))
                .build();
            response
                .headers
                .insert("Idempotent-Replayed".to_string(), RefOr::T(replayed));
        }
    }
}
