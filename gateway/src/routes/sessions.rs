//! The caller's sessions: listed, ended one by one, and all but the
//! current one ended by a password change.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use storefront_proto::common::v1::PageInfo;
use storefront_proto::customers::v1::{
    ChangePasswordRequest, EndSessionRequest, GetCustomerRequest, ListSessionsRequest,
};
use storefront_proto::error::codes;

use crate::bff_token::Customer;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::common::Paged;
use crate::model::sessions::{CustomerSession, PasswordBody};
use crate::ratelimit::middleware::{ClientNetwork, too_many};
use crate::ratelimit::{Scope, normalise};
use crate::state::AppState;

/// Lists the caller's open sessions, newest first (at most MAX_SESSIONS,
/// 20: one page).
#[utoipa::path(get, path = "/customers/{customerId}/sessions", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    responses(
        (status = 200, description = "Every open session, `current` marking the caller's", body = Paged<CustomerSession>),
        (status = 401, description = "UNAUTHORIZED: no, an invalid or a revoked token", body = ErrorBody),
        (status = 403, description = "Another customer's id", body = ErrorBody),
    ))]
pub async fn list_sessions(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
) -> Result<Json<Paged<CustomerSession>>, ApiError> {
    customer.owns(&customer_id)?;
    let message = ListSessionsRequest {
        customer_id: customer.id().to_string(),
        current_session_id: customer.claims.sid.clone(),
    };
    let reply = state
        .downstreams
        .customers()
        .list_sessions(&correlation, message)
        .await?;
    let results: Vec<CustomerSession> = reply.sessions.into_iter().map(Into::into).collect();
    let count = results.len() as u32;
    let page = PageInfo {
        limit: count,
        offset: 0,
        count,
        total: u64::from(count),
    };
    Ok(Json(Paged::new(Some(page), results)?))
}

/// Ends one of the caller's sessions (its access and refresh tokens answer
/// 401 from now on); ending the current one is a logout.
#[utoipa::path(delete, path = "/customers/{customerId}/sessions/{sessionId}", tag = "Customers", security(("BFFToken" = [])),
    params(
        ("customerId" = String, Path, description = "`me` or the caller's own id"),
        ("sessionId" = String, Path, description = "A session's id, as listed"),
    ),
    responses(
        (status = 204, description = "Ended"),
        (status = 401, description = "UNAUTHORIZED: no, an invalid or a revoked token", body = ErrorBody),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 404, description = "NOT_FOUND: no open session of the caller has this id", body = ErrorBody),
    ))]
pub async fn end_session(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path((customer_id, session_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    customer.owns(&customer_id)?;
    let message = EndSessionRequest {
        customer_id: customer.id().to_string(),
        session_id,
    };
    state
        .downstreams
        .customers()
        .end_session(&correlation, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Changes the caller's password and ends every other session of theirs
/// at once (their access and refresh tokens answer 401); this one stays.
#[utoipa::path(put, path = "/customers/{customerId}/password", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    request_body = PasswordBody,
    responses(
        (status = 204, description = "Changed; every other session ended"),
        (status = 400, description = codes::MALFORMED_JSON, body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED: no, an invalid or a revoked token", body = ErrorBody),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 409, description = "CONCURRENT_MODIFICATION: the password changed meanwhile", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: currentPassword missing (REQUIRED) or not correct (INVALID_VALUE); newPassword against the password policy", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED: too many attempts in this session (password-change, RATE_LIMIT_PASSWORD_CHANGE, 5 in 15 minutes), or the account's failed password checks from this network are used up (login-email, RATE_LIMIT_LOGIN_EMAIL; a wrong currentPassword counts there as a failed login does); see Retry-After", body = ErrorBody),
    ))]
pub async fn change_password(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    network: Option<Extension<ClientNetwork>>,
    Path(customer_id): Path<String>,
    ApiJson(body): ApiJson<PasswordBody>,
) -> Result<Response, ApiError> {
    customer.owns(&customer_id)?;
    // Each attempt checks a password (argon2id, under the login's
    // concurrency cap): a session gets a few, and a wrong current
    // password is a failed login of the account, so this route is no
    // way around the login's lockout.
    let limits = &state.limits;
    let sid = customer.claims.sid.as_str();
    if let Some(d) = limits.limiter.check(Scope::PasswordChange, sid).await
        && !d.allowed
    {
        return Ok(too_many(&[d]));
    }
    let ds = &state.downstreams;
    let lookup = GetCustomerRequest {
        customer_id: customer.id().to_string(),
    };
    let email = normalise(
        &ds.customers()
            .get_customer(&correlation, lookup)
            .await?
            .email_address,
    );
    let network = network.map_or_else(String::new, |n| n.0.0);
    let failures = &limits.login_failures;
    if let Some(budget) = failures.budget(&email, &network).await
        && !budget.allowed
    {
        return Ok(too_many(&[budget]));
    }
    let message = ChangePasswordRequest {
        customer_id: customer.id().to_string(),
        current_session_id: sid.to_string(),
        current_password: body.current_password.unwrap_or_default(),
        new_password: body.new_password.unwrap_or_default(),
    };
    match ds.customers().change_password(&correlation, message).await {
        Ok(_) => Ok(StatusCode::NO_CONTENT.into_response()),
        Err(e) => {
            let error = ApiError::from(e);
            let wrong = error
                .errors
                .iter()
                .any(|f| f.field == "currentPassword" && f.code == codes::INVALID_VALUE);
            if wrong {
                failures.record(&email, &network).await;
            }
            Err(error)
        }
    }
}
