//! Sign-up and the customer's own profile and preferences. `{customerId}` is
//! `me` or the caller's own id; any other id is 403.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use storefront_proto::customers::v1::{
    GetCustomerRequest, GetPreferencesRequest, SignUpRequest, UpdatePreferencesRequest,
};
use storefront_proto::error::codes;

use crate::bff_token::Customer;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::customers::{
    CustomerProfile, Preferences, PreferencesBody, ProfileBody, SignUpAccepted, SignUpBody,
};
use crate::ratelimit::normalise;
use crate::state::AppState;

/// Signs up (public, with captcha), without revealing whether the address
/// has an account.
#[utoipa::path(post, path = "/customers", tag = "Customers", request_body = SignUpBody,
    responses(
        (status = 202, description = "Accepted, for a new address and an existing one alike (same status, body and cost): a new account is created and can log in at once; the owner of an existing one is told by mail that someone tried to sign up with it. Budget: RATE_LIMIT_SIGNUP per client IP", body = SignUpAccepted),
        (status = 400, description = codes::MALFORMED_JSON, body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, one entry per bad field (emailAddress, password, firstName, lastName, gRecaptchaResponse)", body = ErrorBody),
    ))]
pub async fn sign_up(
    State(state): State<AppState>,
    correlation: CallContext,
    ApiJson(body): ApiJson<SignUpBody>,
) -> Result<(StatusCode, Json<SignUpAccepted>), ApiError> {
    let email_address = body
        .email_address
        .as_deref()
        .map(normalise)
        .unwrap_or_default();
    state
        .downstreams
        .customers()
        .sign_up(&correlation, SignUpRequest::from(body))
        .await?;
    let accepted = SignUpAccepted {
        email_address,
        message: "Check your email to continue; a new account can log in now.",
    };
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}

/// The caller's profile.
#[utoipa::path(get, path = "/customers/{customerId}", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    responses(
        (status = 200, description = "The profile", body = CustomerProfile),
        (status = 403, description = "Another customer's id", body = ErrorBody),
    ))]
pub async fn get_customer(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
) -> Result<Json<CustomerProfile>, ApiError> {
    customer.owns(&customer_id)?;
    let message = GetCustomerRequest {
        customer_id: customer.id().to_string(),
    };
    Ok(Json(CustomerProfile::try_from(
        state
            .downstreams
            .customers()
            .get_customer(&correlation, message)
            .await?,
    )?))
}

/// Replaces the editable profile fields.
#[utoipa::path(put, path = "/customers/{customerId}", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    request_body = ProfileBody,
    responses(
        (status = 200, description = "The updated profile, with its new version", body = CustomerProfile),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 409, description = "CONCURRENT_MODIFICATION: the version sent is stale", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: version, firstName, lastName, phone, dateOfBirth", body = ErrorBody),
    ))]
pub async fn update_customer(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
    ApiJson(body): ApiJson<ProfileBody>,
) -> Result<Json<CustomerProfile>, ApiError> {
    customer.owns(&customer_id)?;
    let message = body.into_request(customer.id().to_string());
    Ok(Json(CustomerProfile::try_from(
        state
            .downstreams
            .customers()
            .update_customer(&correlation, message)
            .await?,
    )?))
}

/// The caller's preferences.
#[utoipa::path(get, path = "/customers/{customerId}/preferences", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    responses(
        (status = 200, description = "Preferences (defaults en-AU, AUD, no marketing)", body = Preferences),
        (status = 403, description = "Another customer's id", body = ErrorBody),
    ))]
pub async fn get_preferences(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
) -> Result<Json<Preferences>, ApiError> {
    customer.owns(&customer_id)?;
    let message = GetPreferencesRequest {
        customer_id: customer.id().to_string(),
    };
    Ok(Json(
        state
            .downstreams
            .customers()
            .get_preferences(&correlation, message)
            .await?
            .into(),
    ))
}

/// Replaces the caller's preferences.
#[utoipa::path(put, path = "/customers/{customerId}/preferences", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    request_body = PreferencesBody,
    responses(
        (status = 200, description = "The preferences now", body = Preferences),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: preferredLocale (xx-XX), preferredCurrency (one of the shop's currencies, named in the message)", body = ErrorBody),
    ))]
pub async fn update_preferences(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
    ApiJson(body): ApiJson<PreferencesBody>,
) -> Result<Json<Preferences>, ApiError> {
    customer.owns(&customer_id)?;
    let message = UpdatePreferencesRequest {
        customer_id: customer.id().to_string(),
        preferences: Some(body.into()),
    };
    Ok(Json(
        state
            .downstreams
            .customers()
            .update_preferences(&correlation, message)
            .await?
            .into(),
    ))
}
