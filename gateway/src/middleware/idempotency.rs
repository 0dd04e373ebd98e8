//! `Idempotency-Key` on mutating requests (SPEC 8; the IETF
//! Idempotency-Key draft), where the route policy says so: the first
//! request with a key runs and its answer is kept (`IDEMPOTENCY_TTL_SECS`,
//! 24 h) in the shared store, scoped to method, path and principal (the
//! token's subject; without a token, the client's network) with a SHA-256
//! fingerprint of the body. A repeat gets the kept answer with
//! `Idempotent-Replayed: true`; the key with another body is 422
//! `IDEMPOTENCY_KEY_REUSED`; a repeat while the first runs is 409
//! `IDEMPOTENCY_KEY_IN_USE` with `Retry-After`. 5xx answers are not kept,
//! so a retry runs again. The key may be a structured-field string
//! (`"abc"`) or bare (`abc`, as Stripe's clients send it); two of them are
//! 400. What one principal and one network may keep is bounded
//! (`idempotency_allowance`). A replay is an answer like any other: its
//! token must not be revoked, and it is `private, no-store`.

use std::time::Duration;
use storefront_proto::error::codes;

use aws_lc_rs::digest::{SHA256, digest};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use storefront_platform::store::Store;

use super::idempotency_allowance::{Allowed, Holders, unavailable};
use crate::acp::guard::AgentCaller;
use crate::bff_token::{SharedAuth, TOKEN_HEADER, VerifiedToken};
use crate::error::ApiError;
use crate::middleware::json_body::MAX_BODY_BYTES;
use crate::policy::RoutePolicy;
use crate::ratelimit::middleware::ClientNetwork;

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED: &str = "idempotent-replayed";
const MAX_KEY_CHARS: usize = 255;
/// How long a request that is running holds its key: a gateway that
/// stops mid-request frees it after this.
const RUNNING: Duration = Duration::from_secs(60);
/// Answers larger than this are not kept (none of the API's writes is).
const MAX_KEPT_BODY: usize = 1 << 20;
/// The answer headers a replay repeats.
const KEPT_HEADERS: [HeaderName; 3] = [header::CONTENT_TYPE, header::LOCATION, header::ETAG];

/// Where keys are kept, for how long, and how many.
#[derive(Clone)]
pub struct Idempotency {
    pub store: Store,
    pub ttl: Duration,
    pub allowed: Allowed,
    /// To refuse a replay to a revoked token.
    pub auth: SharedAuth,
}

#[derive(Serialize, Deserialize)]
struct Kept {
    fingerprint: String,
    /// None while the first request runs.
    answer: Option<Answer>,
}

#[derive(Serialize, Deserialize)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bad_key(message: &'static str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "INVALID_HEADER", message).field(
        "Idempotency-Key",
        codes::INVALID_FORMAT,
        message,
    )
}

/// The key as sent: a structured-field string or bare; 1 to 255 printable
/// ASCII characters.
pub fn parse_key(raw: &HeaderValue) -> Result<String, ApiError> {
    let text = raw
        .to_str()
        .map_err(|_| bad_key("Idempotency-Key must be printable ASCII"))?
        .trim();
    // Quoted: a structured-field string; one that does not parse as one
    // (a stray quote or escape) is taken whole, as a bare key.
    let quoted = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
    let key = quoted.and_then(unquote).unwrap_or_else(|| text.to_string());
    if key.is_empty() || key.len() > MAX_KEY_CHARS {
        return Err(bad_key("Idempotency-Key must be 1 to 255 characters"));
    }
    if !key.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(bad_key("Idempotency-Key must be printable ASCII"));
    }
    Ok(key)
}

/// A structured-field string's content: `\"` and `\\` escapes only.
fn unquote(quoted: &str) -> Option<String> {
    let mut out = String::with_capacity(quoted.len());
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return None,
            },
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Who the key belongs to: the agent (the protocol facade's callers), the
/// token's subject, or the client's network; and the network's own
/// allowance holder (an agent's is itself).
fn principal(req: &Request) -> (String, String) {
    let network = req.extensions().get::<ClientNetwork>();
    let network = format!("net:{}", network.map_or("", |n| n.0.as_str()));
    if let Some(AgentCaller(agent)) = req.extensions().get::<AgentCaller>() {
        return (format!("agent:{}", agent.id), network);
    }
    if let Some(VerifiedToken(claims)) = req.extensions().get::<VerifiedToken>() {
        return (format!("sub:{}", claims.sub), network);
    }
    (network.clone(), network)
}

fn store_key(method: &Method, path: &str, principal: &str, key: &str) -> String {
    let scope = format!("{method}\n{path}\n{principal}\n{key}");
    format!("idem:{}", hex(digest(&SHA256, scope.as_bytes()).as_ref()))
}

pub async fn idempotency(
    State(kept): State<std::sync::Arc<Idempotency>>,
    req: Request,
    next: Next,
) -> Response {
    let mutating = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    let route = RoutePolicy::of_request(req.extensions());
    let raw = req.headers().get(HEADER).cloned();
    let Some(raw) = raw.filter(|_| mutating && route.idempotent) else {
        return next.run(req).await;
    };
    if req.headers().get_all(HEADER).iter().nth(1).is_some() {
        return bad_key("send one Idempotency-Key header, not several").into_response();
    }
    // A token that did not verify: the handler's 401, never a kept answer.
    let verified = req.extensions().get::<VerifiedToken>().cloned();
    if verified.is_none() && req.headers().contains_key(TOKEN_HEADER) {
        return next.run(req).await;
    }
    let key = match parse_key(&raw) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    let (principal, network) = principal(&req);
    let at = store_key(req.method(), req.uri().path(), &principal, &key);
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE).into_response();
    };
    let fingerprint = hex(digest(&SHA256, &body).as_ref());
    let running = Kept {
        fingerprint: fingerprint.clone(),
        answer: None,
    };
    let holders = Holders { principal, network };
    // Twice: a first request whose answer was a 5xx lets go of its key.
    for _ in 0..2 {
        match kept.store.insert_json(&at, &running, Some(RUNNING)).await {
            Ok(true) => {
                if let Err(refused) = kept.allowed.spend_key(&holders).await {
                    let _ = kept.store.delete(&at).await;
                    return refused;
                }
                let req = Request::from_parts(parts, axum::body::Body::from(body));
                return kept.run(&at, fingerprint, &holders, req, next).await;
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(error = %e, "idempotency store unavailable");
                return unavailable();
            }
        }
        match kept.store.get_json::<Kept>(&at).await {
            Ok(Some(found)) => {
                if let Some(VerifiedToken(claims)) = verified
                    && let Err(e) = kept.auth.admit(claims).await
                {
                    return e.into_response();
                }
                return earlier(found.value, &fingerprint);
            }
            Ok(None) => continue,
            Err(_) => return unavailable(),
        }
    }
    unavailable()
}

/// The answer to a repeat of a key already used.
fn earlier(found: Kept, fingerprint: &str) -> Response {
    if found.fingerprint != fingerprint {
        return ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "IDEMPOTENCY_KEY_REUSED",
            "this Idempotency-Key was used with another request body",
        )
        .into_response();
    }
    let Some(answer) = found.answer else {
        let mut response = ApiError::new(
            StatusCode::CONFLICT,
            "IDEMPOTENCY_KEY_IN_USE",
            "a request with this Idempotency-Key is still running; retry",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(1));
        return response;
    };
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let mut response = (status, answer.body).into_response();
    let headers = response.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    for (name, value) in answer.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(name, value);
        }
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    // The answer to a write, for its caller alone.
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    response
}

impl Idempotency {
    /// Runs the first request with a key and keeps its answer (not a 5xx).
    async fn run(
        &self,
        at: &str,
        fingerprint: String,
        holders: &Holders,
        req: Request,
        next: Next,
    ) -> Response {
        let response = next.run(req).await;
        let (parts, body) = response.into_parts();
        let Ok(body) = axum::body::to_bytes(body, MAX_KEPT_BODY).await else {
            let _ = self.store.delete(at).await;
            return ApiError::internal().into_response();
        };
        let text = std::str::from_utf8(&body).ok();
        match text.filter(|_| !parts.status.is_server_error()) {
            Some(text) => {
                self.keep(at, fingerprint, parts.status, &parts.headers, text)
                    .await;
                self.allowed.spend_bytes(holders, text.len() as u64).await;
            }
            None => {
                let _ = self.store.delete(at).await;
            }
        }
        Response::from_parts(parts, axum::body::Body::from(body))
    }

    async fn keep(
        &self,
        at: &str,
        fingerprint: String,
        status: StatusCode,
        headers: &HeaderMap,
        body: &str,
    ) {
        let headers = KEPT_HEADERS
            .iter()
            .filter_map(|name| {
                let value = headers.get(name)?.to_str().ok()?;
                Some((name.as_str().to_string(), value.to_string()))
            })
            .collect();
        let done = Kept {
            fingerprint,
            answer: Some(Answer {
                status: status.as_u16(),
                headers,
                body: body.to_string(),
            }),
        };
        let kept = match self.store.get_json::<Kept>(at).await {
            Ok(Some(found)) => self
                .store
                .replace_json(at, found.version, &done, Some(self.ttl))
                .await
                .map(|r| r.is_some()),
            Ok(None) => self.store.insert_json(at, &done, Some(self.ttl)).await,
            Err(e) => Err(e),
        };
        if !matches!(kept, Ok(true)) {
            tracing::warn!("an idempotent answer was not kept; a retry runs again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_quoted_or_bare_printable_and_bounded() {
        let parse = |s: &str| parse_key(&HeaderValue::from_str(s).unwrap()).ok();
        assert_eq!(parse("abc-123").as_deref(), Some("abc-123"));
        assert_eq!(parse("\"abc-123\"").as_deref(), Some("abc-123"));
        assert_eq!(parse(r#""a\"b\\c""#).as_deref(), Some(r#"a"b\c"#));
        assert_eq!(parse(&"k".repeat(255)).map(|k| k.len()), Some(255));
        // Not a structured-field string: the whole text, as a bare key.
        assert_eq!(parse(r#""a"b""#).as_deref(), Some(r#""a"b""#));
        assert_eq!(parse(r#""a\nb""#).as_deref(), Some(r#""a\nb""#));
        for bad in ["", "\"\"", " ", &"k".repeat(256)] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert!(parse_key(&HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap()).is_err());
    }

    #[test]
    fn a_key_is_scoped_to_method_path_and_principal() {
        let base = store_key(&Method::POST, "/carts", "sub:a", "k");
        assert_eq!(base, store_key(&Method::POST, "/carts", "sub:a", "k"));
        assert_ne!(base, store_key(&Method::PUT, "/carts", "sub:a", "k"));
        assert_ne!(base, store_key(&Method::POST, "/carts/1", "sub:a", "k"));
        assert_ne!(base, store_key(&Method::POST, "/carts", "sub:b", "k"));
        assert!(base.len() < 80, "bounded whatever the key");
    }
}
