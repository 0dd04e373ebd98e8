//! A request and a response example on every operation, recorded from
//! the mesh's real answers by `tests/e2e/openapi_examples.rs`
//! (`WRITE_EXAMPLES=1`) into `examples.json`; the same test fails when
//! one no longer has the shape of what the mesh answers.

use serde_json::Value;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{OpenApi, RefOr};

const EXAMPLES: &str = include_str!("examples.json");

/// Puts each recorded example on its operation: the request body's, and
/// the answer's under the status it came with.
pub fn apply(doc: &mut OpenApi) {
    let Ok(Value::Object(recorded)) = serde_json::from_str::<Value>(EXAMPLES) else {
        return;
    };
    for (path, item) in doc.paths.paths.iter_mut() {
        let methods = [
            ("GET", &mut item.get),
            ("PUT", &mut item.put),
            ("POST", &mut item.post),
            ("DELETE", &mut item.delete),
            ("PATCH", &mut item.patch),
        ];
        for (method, op) in methods {
            if let (Some(op), Some(seen)) = (op.as_mut(), recorded.get(&format!("{method} {path}")))
            {
                put(op, seen);
            }
        }
    }
}

fn put(op: &mut Operation, seen: &Value) {
    if let (Some(RefOr::T(body)), Some(request)) = (op.request_body.as_mut(), seen.get("request"))
        && let Some(RefOr::T(content)) = body.content.get_mut("application/json")
    {
        content.example = Some(request.clone());
    }
    let status = seen["status"].to_string();
    let response = op.responses.responses.get_mut(&status);
    if let (Some(RefOr::T(response)), Some(answer)) = (response, seen.get("response"))
        && !answer.is_null()
        && let Some(RefOr::T(content)) = response.content.get_mut("application/json")
    {
        content.example = Some(answer.clone());
    }
}
