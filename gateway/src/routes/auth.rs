//! Sessions: login, guest sessions, refresh, logout.

use axum::Extension;
use axum::Json;
use axum::extract::{FromRequest, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use storefront_proto::cart::v1::MergeCartsRequest;
use storefront_proto::customers::v1::{
    LoginRequest, LogoutRequest, RefreshRequest, StartGuestRequest,
};
use storefront_proto::error::codes;
use storefront_proto::names::MAX_EMAIL_CHARS;

use crate::bff_token::Shopper;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::{ApiJson, OptionalJson};
use crate::model::bounded::Id;
use crate::model::customers::{LoginBody, LoginResult, LogoutBody, TokenBody};
use crate::ratelimit::middleware::{ClientNetwork, too_many};
use crate::ratelimit::normalise;
use crate::state::AppState;

/// Logs a customer in.
#[utoipa::path(post, path = "/auth/login", tag = "Authentication", request_body = LoginBody, security((), ("BFFToken" = [])),
    responses(
        (status = 200, description = "Logged in; send accessToken as X-BFF-Token. A customer has at most MAX_SESSIONS (20) sessions: this login ends the oldest beyond it. With a guest's token in X-BFF-Token (optional), the guest's active cart is merged into the customer's (CART_MERGE_STRATEGY: `merge` into their latest active cart of its currency, or `keep-guest` as a new cart of theirs), every line priced afresh and every code checked again; `mergeReport` says what was added, changed and dropped, and why; the guest's token stops working. However many logins race with one guest token, the cart is merged once. A token that is not a valid guest's is ignored", body = LoginResult),
        (status = 400, description = codes::MALFORMED_JSON, body = ErrorBody),
        (status = 401, description = "INVALID_CREDENTIALS, for a wrong password and an unknown email alike", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: a missing field, an emailAddress over 254 characters once trimmed (TOO_LONG), or the captcha rejected (field gRecaptchaResponse)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: too many attempts from this IP address; too many failed password checks for this account from this network (login-email, RATE_LIMIT_LOGIN_EMAIL); or, past the account's ceiling over all networks (login-account, RATE_LIMIT_LOGIN_ACCOUNT), an attempt from a network the account has not logged in from. Requests refused for validation or the captcha never count; see Retry-After", body = ErrorBody),
        (status = 503, description = "RATE_LIMITER_UNAVAILABLE (login limits cannot be checked), or the customers service or captcha verifier is unavailable", body = ErrorBody),
    ))]
pub async fn login(
    State(state): State<AppState>,
    correlation: CallContext,
    network: Option<Extension<ClientNetwork>>,
    guest: Result<Shopper, ApiError>,
    headers: axum::http::HeaderMap,
    ApiJson(body): ApiJson<LoginBody>,
) -> Result<Response, ApiError> {
    // Password guessing is slowed per account and client network; only
    // failed password checks count, so a stranger's malformed or
    // captcha-less requests cannot lock the owner out, nor can guesses
    // from a stranger's network (see `ratelimit::failures`).
    // Counted before lower-casing, which can lengthen a text, as the
    // customers service counts it.
    if body
        .email_address
        .as_deref()
        .is_some_and(|e| e.trim().chars().count() > MAX_EMAIL_CHARS)
    {
        return Err(ApiError::invalid_field(
            "emailAddress",
            codes::TOO_LONG,
            format!("emailAddress must be at most {MAX_EMAIL_CHARS} characters"),
        ));
    }
    let email = body
        .email_address
        .as_deref()
        .map(normalise)
        .filter(|e| !e.is_empty());
    let network = network.map_or_else(String::new, |n| n.0.0);
    let failures = &state.limits.login_failures;
    if let Some(email) = &email
        && let Some(budget) = failures.budget(email, &network).await
        && !budget.allowed
    {
        return Ok(too_many(&[budget]));
    }
    let ds = &state.downstreams;
    let mut message = LoginRequest::from(body);
    // Shown in the customer's session list; bounded here, as every client
    // string is at the edge.
    message.user_agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| ua.chars().take(256).collect())
        .unwrap_or_default();
    match ds.customers().login(&correlation, message).await {
        Ok(reply) => {
            if let Some(email) = &email {
                failures.succeeded(email, &network).await;
            }
            let mut result = LoginResult::from(reply);
            if let (Ok(guest), Some(customer)) = (guest, result.customer.as_ref()) {
                let merged = merge_guest(&state, &correlation, guest, &customer.id).await;
                result.merge_report = merged.map(Into::into);
            }
            Ok(Json(result).into_response())
        }
        Err(error) => {
            let error = ApiError::from(error);
            if error.code.as_deref() == Some("INVALID_CREDENTIALS")
                && let Some(email) = &email
            {
                failures.record(email, &network).await;
            }
            Err(error)
        }
    }
}

/// The guest's cart merged for `customer_id` (once per guest, however
/// many logins race), then the guest's session ended. A failed merge is
/// logged and leaves the guest as they were (a later login merges).
async fn merge_guest(
    state: &AppState,
    correlation: &CallContext,
    guest: Shopper,
    customer_id: &str,
) -> Option<storefront_proto::cart::v1::MergeReport> {
    if !guest.is_guest() {
        return None;
    }
    let claims = guest.0.claims;
    let ds = &state.downstreams;
    let message = MergeCartsRequest {
        guest_id: claims.sub.clone(),
        customer_id: customer_id.to_string(),
    };
    let report = match ds.cart().merge_carts(correlation, message).await {
        Ok(report) => report,
        Err(e) => {
            tracing::warn!(error = %e, "the guest's cart was not merged at login");
            return None;
        }
    };
    let end = LogoutRequest {
        customer_id: claims.sub,
        token_id: claims.jti,
        session_id: claims.sid,
        expires_at: claims.exp as i64,
        refresh_token: String::new(),
    };
    if let Err(e) = ds.customers().logout(correlation, end).await {
        tracing::warn!(error = %e, "the merged guest's session was not ended");
    }
    Some(report)
}

/// Starts a guest session: a shopper who has not signed up can keep carts
/// and check out (with the shipping address in the checkout body).
#[utoipa::path(post, path = "/auth/guest", tag = "Authentication",
    responses(
        (status = 201, description = "A guest's session: the login result without `customer`. Its access token (scope `guest`) works for carts and checkout; profile, addresses, preferences, sessions and orders answer it 403 FORBIDDEN. It refreshes at POST /auth/token like a customer's", body = LoginResult),
        (status = 415, description = "A body that is not JSON (none is needed)", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: too many guest sessions started from this IP address (guest, RATE_LIMIT_GUEST); see Retry-After", body = ErrorBody),
    ))]
pub async fn guest(
    State(state): State<AppState>,
    correlation: CallContext,
    OptionalJson(_body): OptionalJson<serde::de::IgnoredAny>,
) -> Result<(StatusCode, Json<LoginResult>), ApiError> {
    let ds = &state.downstreams;
    let session = ds
        .customers()
        .start_guest(&correlation, StartGuestRequest {})
        .await?;
    Ok((StatusCode::CREATED, Json(LoginResult::from(session))))
}

/// Exchanges a refresh token for a new access token and a new refresh token.
#[utoipa::path(post, path = "/auth/token", tag = "Authentication", request_body = TokenBody,
    responses(
        (status = 200, description = "A new pair; the refresh token sent is used up", body = LoginResult),
        (status = 401, description = "INVALID_REFRESH_TOKEN, SESSION_REVOKED, or REFRESH_TOKEN_REUSED (which revokes the whole session)", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: grantType must be refresh_token; refreshToken required", body = ErrorBody),
    ))]
pub async fn token(
    State(state): State<AppState>,
    correlation: CallContext,
    ApiJson(body): ApiJson<TokenBody>,
) -> Result<Json<LoginResult>, ApiError> {
    match body.grant_type.as_deref() {
        Some("refresh_token") => {}
        None => {
            return Err(ApiError::invalid_field(
                "grantType",
                codes::REQUIRED,
                "grantType is required",
            ));
        }
        Some(_) => {
            return Err(ApiError::invalid_field(
                "grantType",
                codes::UNSUPPORTED,
                "grantType must be refresh_token",
            ));
        }
    }
    let refresh_token = body.refresh_token.map(Id::into_inner).ok_or_else(|| {
        ApiError::invalid_field("refreshToken", codes::REQUIRED, "refreshToken is required")
    })?;
    Ok(Json(LoginResult::from(
        state
            .downstreams
            .customers()
            .refresh(&correlation, RefreshRequest { refresh_token })
            .await?,
    )))
}

/// Ends the session (a customer's or a guest's): this access token and its
/// refresh tokens stop working at once.
#[utoipa::path(post, path = "/auth/logout", tag = "Authentication", security(("BFFToken" = []), ()),
    request_body(content = Option<LogoutBody>, description = "Optional: `refreshToken` ends its session even when the access token has expired; without a body the X-BFF-Token is required"),
    responses(
        (status = 204, description = "Logged out"),
        (status = 400, description = codes::MALFORMED_JSON, body = ErrorBody),
        (status = 401, description = "No valid X-BFF-Token and no refreshToken, or INVALID_REFRESH_TOKEN", body = ErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE: a body that is not JSON", body = ErrorBody),
        (status = 422, description = codes::VALIDATION_ERROR, body = ErrorBody),
    ))]
pub async fn logout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Result<Shopper, ApiError>,
    request: Request,
) -> Result<StatusCode, ApiError> {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, crate::middleware::json_body::MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE))?;
    let body = if bytes.iter().all(u8::is_ascii_whitespace) {
        LogoutBody::default()
    } else {
        let request = Request::from_parts(parts, axum::body::Body::from(bytes));
        ApiJson::<LogoutBody>::from_request(request, &state)
            .await?
            .0
    };
    let refresh_token = body.refresh_token.map(Id::into_inner).unwrap_or_default();
    // Without a refresh token, the access token must be good (401 otherwise).
    let claims = match customer {
        Ok(c) => Some(c.0.claims),
        Err(e) if refresh_token.is_empty() => return Err(e),
        Err(_) => None,
    };
    let message = match claims {
        Some(c) => LogoutRequest {
            customer_id: c.sub,
            token_id: c.jti,
            session_id: c.sid,
            expires_at: c.exp as i64,
            refresh_token,
        },
        None => LogoutRequest {
            refresh_token,
            ..Default::default()
        },
    };
    state
        .downstreams
        .customers()
        .logout(&correlation, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
