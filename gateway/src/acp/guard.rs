//! What every `/acp/` request passes before its handler, outside the
//! idempotency layer (so that keys are the agent's): the agent by its
//! `Authorization: Bearer` key, the protocol's `API-Version`, the agent's
//! rate budget (`RATE_LIMIT_AGENT`), its `Signature` over a fresh
//! `Timestamp` where it signs, and an `Idempotency-Key` on every POST; at
//! `/mcp`, the connection's key and budget. Outermost of all the edge's
//! layers, `protocol_errors` puts every `/acp/` error in the protocol's
//! shape (`type`, `code`, `message`, `param`) and echoes `Request-Id` and
//! `Idempotency-Key`.

use std::sync::Arc;

use aws_lc_rs::hmac;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use serde::Deserialize;

use super::wire::AcpError;
use crate::budget::Scope;
use crate::middleware::json_body::MAX_BODY_BYTES;
use crate::ratelimit::Limiter;
use crate::ratelimit::middleware::ClientNetwork;
use storefront_platform::agents::{Agent, Agents};

/// The protocol versions served, newest first.
pub const VERSIONS: [&str; 1] = ["2026-04-17"];
pub const PREFIX: &str = "/acp/";
pub const MCP: &str = "/mcp";
pub const CONTRACT: &str = "/acp/openapi.json";
/// How far a `Timestamp` may be from now, either way.
const SKEW_SECS: i64 = 300;
/// Errors and answers larger than this are passed as they are.
const MAX_ERROR_BYTES: usize = 64 * 1024;

/// What the guard needs.
pub struct Guard {
    pub agents: Agents,
    pub limiter: Arc<Limiter>,
}

/// The agent a request is from.
#[derive(Clone, Debug)]
pub struct AgentCaller(pub Arc<Agent>);

pub async fn guard(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if path == MCP || path.starts_with("/mcp/") {
        // The connection's agent and budget; each tool call is checked
        // again as the REST request it makes.
        let agent = match agent_of(&guard.agents, req.headers()) {
            Ok(agent) => agent,
            Err(refused) => return refused.into_response(),
        };
        return match within_budget(&guard, &agent).await {
            Ok(()) => next.run(req).await,
            Err(refused) => refused,
        };
    }
    // The protocol's document is for anyone to read.
    if !path.starts_with(PREFIX) || path == CONTRACT {
        return next.run(req).await;
    }
    match admit(&guard, req).await {
        Ok(req) => next.run(req).await,
        Err(refused) => refused,
    }
}

/// The outermost layer for `/acp/`: every error answer, whichever layer
/// made it (the edge's checks of a request's text included), in the
/// protocol's shape, and `Request-Id` and `Idempotency-Key` echoed.
pub async fn protocol_errors(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with(PREFIX) {
        return next.run(req).await;
    }
    let echo = [
        ("request-id", req.headers().get("request-id").cloned()),
        (
            "idempotency-key",
            req.headers().get("idempotency-key").cloned(),
        ),
    ];
    let mut response = in_protocol_shape(next.run(req).await).await;
    for (name, value) in echo {
        if let Some(value) = value {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

async fn admit(guard: &Guard, req: Request) -> Result<Request, Response> {
    let agent = agent_of(&guard.agents, req.headers()).map_err(IntoResponse::into_response)?;
    version(req.headers()).map_err(IntoResponse::into_response)?;
    within_budget(guard, &agent).await?;
    if req.method() == Method::POST && !req.headers().contains_key("idempotency-key") {
        return Err(AcpError::invalid(
            StatusCode::BAD_REQUEST,
            "idempotency_key_required",
            "Idempotency-Key header is required",
        )
        .into_response());
    }
    let (mut parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        let too_large = "the body is larger than the API takes";
        return Err(
            AcpError::invalid(StatusCode::PAYLOAD_TOO_LARGE, "too_large", too_large)
                .into_response(),
        );
    };
    if agent.signs || parts.headers.contains_key("signature") {
        verify(
            &agent,
            &parts.method,
            parts.uri.path(),
            &parts.headers,
            &body,
        )
        .map_err(IntoResponse::into_response)?;
    }
    parts
        .extensions
        .insert(ClientNetwork(format!("agent:{}", agent.id)));
    parts.extensions.insert(AgentCaller(agent));
    Ok(Request::from_parts(parts, Body::from(body)))
}

/// 429 `rate_limited` past the agent's budget (`RATE_LIMIT_AGENT`).
async fn within_budget(guard: &Guard, agent: &Agent) -> Result<(), Response> {
    let Some(decision) = guard.limiter.check(Scope::Agent, &agent.id).await else {
        return Ok(());
    };
    if decision.allowed {
        return Ok(());
    }
    let after = decision.retry_after.max(1);
    let message = format!("too many requests from this agent; retry after {after} s");
    let mut refused =
        AcpError::invalid(StatusCode::TOO_MANY_REQUESTS, "rate_limited", message).into_response();
    refused
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(after));
    Err(refused)
}

fn unauthorized(message: &'static str) -> AcpError {
    AcpError::invalid(StatusCode::UNAUTHORIZED, "unauthorized", message)
}

fn agent_of(agents: &Agents, headers: &HeaderMap) -> Result<Arc<Agent>, AcpError> {
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .ok_or_else(|| unauthorized("send Authorization: Bearer <the agent's API key>"))?;
    agents
        .by_key(key)
        .ok_or_else(|| unauthorized("the API key is not an agent's"))
}

fn version(headers: &HeaderMap) -> Result<(), AcpError> {
    let sent = headers.get("api-version").and_then(|v| v.to_str().ok());
    match sent {
        Some(v) if VERSIONS.contains(&v.trim()) => Ok(()),
        _ => Err(AcpError::invalid(
            StatusCode::BAD_REQUEST,
            "unsupported_api_version",
            format!("send API-Version: one of {}", VERSIONS.join(", ")),
        )
        .param("API-Version")),
    }
}

/// `Signature`: base64url of HMAC-SHA256, keyed by the agent's signing
/// secret, over `Timestamp`, the method, the path and the body, each
/// followed by a newline but the body (docs/agents.md).
pub fn signed_text(timestamp: &str, method: &Method, path: &str, body: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(timestamp.len() + path.len() + body.len() + 16);
    for part in [
        timestamp.as_bytes(),
        method.as_str().as_bytes(),
        path.as_bytes(),
    ] {
        text.extend_from_slice(part);
        text.push(b'\n');
    }
    text.extend_from_slice(body);
    text
}

fn verify(
    agent: &Agent,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), AcpError> {
    let refuse = |code: &'static str, message: &'static str| {
        AcpError::invalid(StatusCode::UNAUTHORIZED, code, message)
    };
    let secret = agent
        .signing_secret
        .as_deref()
        .ok_or_else(|| refuse("invalid_signature", "this agent has no signing secret"))?;
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let timestamp = text("timestamp").ok_or_else(|| {
        refuse(
            "invalid_signature",
            "a signed request needs Timestamp (RFC 3339)",
        )
    })?;
    let at: prost_types::Timestamp = timestamp.parse().map_err(|_| {
        refuse(
            "invalid_signature",
            "Timestamp must be an RFC 3339 date-time",
        )
    })?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if (now - at.seconds).abs() > SKEW_SECS {
        return Err(refuse(
            "stale_timestamp",
            "Timestamp is more than 5 minutes from now",
        ));
    }
    let sent = text("signature").ok_or_else(|| {
        refuse(
            "invalid_signature",
            "this agent signs its requests: send Signature",
        )
    })?;
    let sent = URL_SAFE_NO_PAD
        .decode(sent.trim_end_matches('='))
        .or_else(|_| URL_SAFE.decode(sent))
        .map_err(|_| refuse("invalid_signature", "Signature must be base64url"))?;
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    hmac::verify(&key, &signed_text(timestamp, method, path, body), &sent).map_err(|_| {
        refuse(
            "invalid_signature",
            "the Signature does not match the request",
        )
    })
}

/// The gateway's own error body, as far as the protocol's shape needs it.
#[derive(Deserialize)]
struct OurError {
    /// The protocol's errors have none: what tells the two apart.
    #[allow(dead_code)]
    status: u16,
    message: String,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    errors: Vec<OurField>,
}

/// The protocol's error shape, as the guard's own refusals have it.
#[derive(Deserialize)]
#[allow(dead_code)]
struct AcpShaped {
    #[serde(rename = "type")]
    kind: String,
    code: String,
}

#[derive(Deserialize)]
struct OurField {
    field: String,
}

/// An error answer of the gateway's shape (the idempotency layer's, a
/// handler's) in the protocol's; other answers pass as they are.
async fn in_protocol_shape(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BYTES).await else {
        return AcpError::processing().into_response();
    };
    let Ok(ours) = serde_json::from_slice::<OurError>(&bytes) else {
        if serde_json::from_slice::<AcpShaped>(&bytes).is_ok() {
            // The guard's own refusals.
            return Response::from_parts(parts, Body::from(bytes));
        }
        // The router's own (a method a route does not take), with no body.
        let reason = status.canonical_reason().unwrap_or("error");
        let code = reason.to_ascii_lowercase().replace(' ', "_");
        return AcpError::with_status(status, code, reason.to_ascii_lowercase()).into_response();
    };
    let code = match ours.code.as_deref() {
        Some("IDEMPOTENCY_KEY_REUSED") => "idempotency_conflict".to_string(),
        Some("IDEMPOTENCY_KEY_IN_USE") => "idempotency_in_flight".to_string(),
        Some("RATE_LIMIT_EXCEEDED") => "rate_limited".to_string(),
        Some(c) => c.to_ascii_lowercase(),
        None => status
            .canonical_reason()
            .unwrap_or("error")
            .to_ascii_lowercase()
            .replace(' ', "_"),
    };
    let mut error = AcpError::with_status(status, code, ours.message);
    if let Some(f) = ours.errors.into_iter().next() {
        error = error.param(f.field);
    }
    let mut shaped = error.into_response();
    for name in [header::RETRY_AFTER, header::WWW_AUTHENTICATE] {
        if let Some(v) = parts.headers.get(&name) {
            shaped.headers_mut().insert(name, v.clone());
        }
    }
    if let Some(v) = parts.headers.get("idempotent-replayed") {
        shaped
            .headers_mut()
            .insert("idempotent-replayed", v.clone());
    }
    shaped
}
