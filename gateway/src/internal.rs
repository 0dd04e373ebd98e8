//! The internal REST surface (fulfilment moves orders along), served on its
//! own port that is never published. Callers present a cloud identity token
//! in `Authorization: Bearer`, checked like the services check theirs.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{post, put};
use axum::{Json, Router};
use storefront_platform::identity::verifier::{IdentityVerifier, VerifyError};
use storefront_proto::content::v1::ReloadRequest as ContentReload;
use storefront_proto::orders::v1::AdvanceOrderRequest;
use storefront_proto::search::v1::ReindexRequest;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;

use crate::config::GatewayConfig;
use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::middleware::call_context::{self, CallContext};
use crate::middleware::errors;
use crate::middleware::json_body::{ApiJson, MAX_BODY_BYTES};
use crate::middleware::observe;
use crate::model::orders::{OrderV2, StatusBody, parse_status};
use crate::ratelimit::Limiter;
use crate::ratelimit::Scope;
use crate::ratelimit::middleware::too_many;

#[derive(Clone)]
pub struct InternalState {
    downstreams: Arc<Downstreams>,
    verifier: Arc<IdentityVerifier>,
    limiter: Arc<Limiter>,
}

/// A verified calling service account.
pub struct ServiceCaller(pub String);

impl FromRequestParts<InternalState> for ServiceCaller {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &InternalState,
    ) -> Result<Self, Response> {
        let caller = verified(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        // Each service account has its own budget (RATE_LIMIT_SERVICE).
        if let Some(decision) = state.limiter.check(Scope::Service, &caller.0).await
            && !decision.allowed
        {
            return Err(too_many(&[decision]));
        }
        Ok(caller)
    }
}

async fn verified(parts: &Parts, state: &InternalState) -> Result<ServiceCaller, ApiError> {
    let token = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "an identity token is required",
            )
        })?;
    // The method of an internal route is its last literal segment.
    let method = parts
        .uri
        .path()
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    match state.verifier.verify(&token, method).await {
        Ok(caller) => Ok(ServiceCaller(caller.account)),
        Err(VerifyError::Unauthenticated(_)) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "INVALID_TOKEN",
            "the identity token was not accepted",
        )),
        Err(VerifyError::PermissionDenied(_)) => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "this service account may not call here",
        )),
        Err(e @ VerifyError::Unavailable(_)) => {
            Err(ApiError::unavailable("identity verification", e))
        }
    }
}

/// Fulfilment: PROCESSING, SHIPPED, DELIVERED, one step at a time.
async fn set_status(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    Path(order_id): Path<String>,
    ApiJson(body): ApiJson<StatusBody>,
) -> Result<Json<OrderV2>, ApiError> {
    let invalid = |code: &str, message: &str| ApiError::invalid_field("status", code, message);
    let status = body
        .status
        .ok_or_else(|| invalid("REQUIRED", "status is required"))?;
    let status = parse_status(&status).ok_or_else(|| invalid("INVALID_VALUE", "unknown status"))?;
    let message = AdvanceOrderRequest {
        order_id,
        status: status as i32,
    };
    Ok(Json(OrderV2::try_from(
        state
            .downstreams
            .orders()
            .advance_order(&correlation, message)
            .await?,
    )?))
}

/// Maintenance routes (a reindex, a reload) are costly: each caller may
/// run each at most once per `RATE_LIMIT_MAINTENANCE` (one per 10 s by
/// default), shared by every replica through Redis; sooner is 429.
async fn cool_down(
    state: &InternalState,
    caller: &ServiceCaller,
    route: &str,
) -> Result<(), Response> {
    let key = format!("{}:{route}", caller.0);
    match state.limiter.check(Scope::Maintenance, &key).await {
        Some(decision) if !decision.allowed => Err(too_many(&[decision])),
        _ => Ok(()),
    }
}

/// Rebuilds the search index from the catalog now.
async fn reindex(
    State(state): State<InternalState>,
    correlation: CallContext,
    caller: ServiceCaller,
) -> Result<Json<serde_json::Value>, Response> {
    cool_down(&state, &caller, "reindex").await?;
    let reply = state
        .downstreams
        .search()
        .reindex(&correlation, ReindexRequest {})
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
    Ok(Json(
        serde_json::json!({"catalogVersion": reply.catalog_version, "documents": reply.documents}),
    ))
}

/// Reloads the content files.
async fn reload_content(
    State(state): State<InternalState>,
    correlation: CallContext,
    caller: ServiceCaller,
) -> Result<Json<serde_json::Value>, Response> {
    cool_down(&state, &caller, "reload").await?;
    let reply = state
        .downstreams
        .content()
        .reload(&correlation, ContentReload {})
        .await
        .map_err(|e| ApiError::from(e).into_response())?;
    Ok(Json(serde_json::json!({"documents": reply.documents})))
}

pub fn app(config: &GatewayConfig, downstreams: Arc<Downstreams>, limiter: Arc<Limiter>) -> Router {
    let verifier = Arc::new(IdentityVerifier::new(config.internal_identity.clone()));
    let inner = Router::new()
        .route("/internal/orders/{orderId}/status", put(set_status))
        .route("/internal/search/reindex", post(reindex))
        .route("/internal/content/reload", post(reload_content))
        .fallback(|| async { ApiError::for_status(StatusCode::NOT_FOUND) })
        .with_state(InternalState {
            limiter,
            downstreams,
            verifier,
        });
    inner.layer(
        ServiceBuilder::new()
            .layer(axum::middleware::from_fn(errors::normalize))
            .layer(axum::middleware::from_fn(call_context::correlation_id))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(observe::TraceTrust::Everyone),
                observe::observe,
            ))
            .layer(CatchPanicLayer::custom(errors::panic_response))
            .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES)),
    )
}
