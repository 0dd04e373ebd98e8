//! Paying for a checkout session, the providers' webhooks, and the test
//! provider's 3-D Secure page (docs/payments.md).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use bytes::Bytes;
use serde::Serialize;
use storefront_proto::cart::v1::{PayCheckoutRequest, PaymentChangedRequest, PaymentWebhookReply};
use storefront_proto::error::codes;
use storefront_proto::payments::v1::{CompleteActionRequest, VerifyWebhookRequest};
use utoipa::ToSchema;

use crate::bff_token::Shopper;
use crate::error::{About, ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::{ApiJson, OptionalJson};
use crate::model::payments::{AuthenticateBody, Payment, PaymentBody};
use crate::state::AppState;

/// A provider's delivery above this is refused (413): Stripe's events are
/// a few kilobytes.
pub const MAX_WEBHOOK_BYTES: usize = 256 * 1024;
/// The providers whose webhooks are taken.
const PROVIDERS: &[&str] = &["stripe", "test"];

/// Starts the session's payment of its `totals.total` (or answers the one
/// already started), and confirms it with `paymentMethod` when given.
#[utoipa::path(post, path = "/checkout/{sessionId}/payment", tag = "Cart", security(("BFFToken" = [])),
    request_body(content = PaymentBody, description = "Optional: a method to confirm with at once"),
    params(("sessionId" = String, Path, description = "Checkout session id")),
    responses(
        (status = 201, description = "A payment was started for the session's totals.total (a new one when the total changed since the last, which is voided): requires_payment_method without paymentMethod (confirm it with clientSecret), authorized when paymentMethod authorized, requires_action with nextAction (3-D Secure) when the shopper must act; then confirm the session", body = Payment),
        (status = 200, description = "The session's payment, already started for its total (confirmed with paymentMethod if it still needed one); a confirmed session's payment", body = Payment),
        (status = 402, description = "PAYMENT_DECLINED: the provider declined paymentMethod; `payment` carries its declineCode (e.g. generic_decline). The session stays open: send another method", body = ErrorBody),
        (status = 404, description = "No such session of the caller's", body = ErrorBody),
        (status = 409, description = "CHECKOUT_EXPIRED (past expiresAt, or its stock released); CHECKOUT_SUPERSEDED; PAYMENT_STATE: the provider refused the payment's move in its state; for a session awaiting payment (awaitingPayment), authorized but its lines no longer fit what a paid checkout may hold (HOLD_LIMIT_REACHED) or sold meanwhile (INSUFFICIENT_STOCK, each line short in `errors`): the session ends and the payment is voided", body = ErrorBody),
        (status = 415, description = "A body that is not JSON (an empty body needs no Content-Type)", body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: paymentMethod longer than 255 characters, or not one the provider knows (the test provider takes pm_card_visa, pm_card_visa_chargeDeclined, pm_card_threeDSecure2Required)", body = ErrorBody),
        (status = 503, description = "SERVICE_UNAVAILABLE: the payment provider is out of reach; nothing was charged, the session still holds its stock until it expires: retry (see Retry-After)", body = ErrorBody),
    ))]
pub async fn pay_checkout(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Shopper,
    Path(session_id): Path<String>,
    OptionalJson(body): OptionalJson<PaymentBody>,
) -> Result<(StatusCode, Json<Payment>), ApiError> {
    let message = PayCheckoutRequest {
        customer_id: customer.id().to_string(),
        session_id,
        payment_method: body.and_then(|b| b.payment_method).unwrap_or_default(),
    };
    let ds = &state.downstreams;
    let reply = ds.cart().pay_checkout(&correlation, message).await?;
    let session = reply.session.ok_or_else(ApiError::internal)?;
    let payment = session.payment.ok_or_else(ApiError::internal)?;
    let payment = Payment::try_from(payment)?;
    if reply.declined {
        return Err(declined(payment));
    }
    let status = if reply.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(payment)))
}

/// 402 `PAYMENT_DECLINED`, with the payment and its decline code.
fn declined(payment: Payment) -> ApiError {
    let code = payment.decline_code.clone().unwrap_or_default();
    let message = format!("the payment method was declined ({code}); try another");
    let mut error = ApiError::new(StatusCode::PAYMENT_REQUIRED, "PAYMENT_DECLINED", message).field(
        "paymentMethod",
        "DECLINED",
        code,
    );
    error.about = Some(Box::new(About {
        payment: serde_json::to_value(&payment).ok(),
        ..About::default()
    }));
    error
}

/// What a webhook delivery came to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookReceipt {
    /// Always true: the delivery verified and was applied (again, when
    /// it repeats one: each applies once).
    pub received: bool,
    /// The order the payment's session became, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
}

/// A payment provider's webhook. Its raw body's signature is its only
/// authentication (no version header, no customer token): Stripe's
/// `Stripe-Signature` (`t=...,v1=...`, HMAC-SHA256 over `t.body`, within
/// 300 s). Each delivery makes the payments service read the payment
/// again, so deliveries repeated or out of order have one effect; a
/// payment that authorizes a session's whole total makes its order, once,
/// whether or not the shopper confirms.
#[utoipa::path(post, path = "/webhooks/payments/{provider}", tag = "Payments",
    request_body(content = Object, description = "The provider's event, as it signed it", content_type = "application/json"),
    params(
        ("provider" = String, Path, description = "stripe or test"),
        ("Stripe-Signature" = String, Header, description = "t=<unix seconds>,v1=<hex HMAC-SHA256>"),
    ),
    responses(
        (status = 200, description = "Verified and applied", body = WebhookReceipt),
        (status = 400, description = "INVALID_SIGNATURE: no Stripe-Signature, or one that does not verify or is older than 300 s; nothing applied", body = ErrorBody),
        (status = 404, description = "No such provider here (the payments service runs one)", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE: a body above 256 KiB", body = ErrorBody),
        (status = 503, description = "A service is out of reach: the provider retries the delivery", body = ErrorBody),
    ))]
pub async fn payment_webhook(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<WebhookReceipt>, ApiError> {
    if !PROVIDERS.contains(&provider.as_str()) {
        return Err(ApiError::not_found("no such payment provider"));
    }
    if body.len() > MAX_WEBHOOK_BYTES {
        return Err(ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE));
    }
    let signature = headers
        .get("stripe-signature")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "INVALID_SIGNATURE",
                "the Stripe-Signature header is required",
            )
        })?;
    // Made again only for the two-call path: the body is up to 256 KiB.
    let webhook = || VerifyWebhookRequest {
        provider: provider.clone(),
        signature: signature.to_string(),
        body: body.to_vec(),
    };
    let cart = state.downstreams.cart();
    let applied = match cart.payment_webhook(&correlation, webhook()).await {
        // A cart replica older than this gateway, an allow-list that does
        // not name the method for the gateway's account, or a cart the
        // payments service does not verify webhooks for (WEBHOOKS_NOT_SERVED).
        Err(e) if e.not_served() => verify_then_apply(&state, &correlation, webhook()).await?,
        applied => applied?,
    };
    tracing::info!(event_id = %applied.event_id, kind = %applied.r#type, "payment webhook applied");
    Ok(Json(WebhookReceipt {
        received: true,
        order_id: Some(applied.order_id).filter(|o| !o.is_empty()),
    }))
}

/// The delivery in two calls, as before the cart took webhooks: verified
/// by the payments service, then passed to the cart.
async fn verify_then_apply(
    state: &AppState,
    correlation: &CallContext,
    webhook: VerifyWebhookRequest,
) -> Result<PaymentWebhookReply, ApiError> {
    let ds = &state.downstreams;
    let event = ds.payments().verify_webhook(correlation, webhook).await?;
    let mut applied = PaymentWebhookReply {
        event_id: event.id,
        r#type: event.r#type,
        order_id: String::new(),
    };
    if !event.reference.is_empty() {
        let changed = PaymentChangedRequest {
            session_id: event.reference,
            payment_id: event.payment_id,
            holds_money: event.holds_money,
        };
        applied.order_id = ds
            .cart()
            .payment_changed(correlation, changed)
            .await?
            .order_id;
    }
    Ok(applied)
}

/// The test provider's 3-D Secure page (the `nextAction.url` of its
/// payments that need one): the shopper passes or fails it. Served only
/// where the test provider runs (local and development).
#[utoipa::path(post, path = "/payments/test/{paymentId}/authenticate", tag = "Payments",
    request_body = AuthenticateBody,
    params(("paymentId" = String, Path, description = "The test payment's id (pi_test_...)")),
    responses(
        (status = 200, description = "The payment after: authorized when passed (confirm the session), requires_payment_method with declineCode authentication_required when failed", body = Payment),
        (status = 404, description = "No such test payment", body = ErrorBody),
        (status = 409, description = "PAYMENT_STATE: the payment needs no action, or the provider is not the test one", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR: passed missing or not a boolean", body = ErrorBody),
    ))]
pub async fn test_authenticate(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(payment_id): Path<String>,
    ApiJson(body): ApiJson<AuthenticateBody>,
) -> Result<Json<Payment>, ApiError> {
    let message = CompleteActionRequest {
        id: payment_id,
        passed: body.passed,
    };
    let ds = &state.downstreams;
    let payment = ds.payments().complete_action(&correlation, message).await?;
    Ok(Json(Payment::try_from(payment)?))
}
