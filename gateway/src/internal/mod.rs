//! The internal REST surface, served on its own port that is never
//! published: fulfilment moves orders along (`orders`), operations reindex
//! and reload (`maintenance`), merchandising changes the catalog
//! (`catalog`). Callers present a cloud identity token in
//! `Authorization: Bearer`, checked like the services check theirs, and
//! may call only the routes `INTERNAL_CALLERS` names for them (a route is
//! named by the last literal segment of its path). The port has its own
//! OpenAPI document at `/internal/openapi.json`.

mod catalog;
mod events;
mod export;
mod maintenance;
mod markets;
mod orders;
mod promotions;

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, MatchedPath, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use storefront_platform::identity::verifier::{IdentityVerifier, VerifyError};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::config::GatewayConfig;
use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::middleware::call_context;
use crate::middleware::errors;
use crate::middleware::json_body::MAX_BODY_BYTES;
use crate::middleware::observe;
use crate::ratelimit::Limiter;
use crate::ratelimit::Scope;
use crate::ratelimit::middleware::too_many;

#[derive(Clone)]
pub struct InternalState {
    downstreams: Arc<Downstreams>,
    verifier: Arc<IdentityVerifier>,
    limiter: Arc<Limiter>,
    /// The port's OpenAPI document, for its callers alone.
    doc: Arc<String>,
    /// `ACP_PRODUCT_URL`: product pages in the feed for agents.
    product_url: Arc<str>,
    /// The public port's category tree, forgotten by each catalog change.
    tree: Arc<crate::documents::TreeDocument>,
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

/// `/internal/catalog/products/{productId}` -> `products`.
fn route_name(template: &str) -> &str {
    template
        .rsplit('/')
        .find(|s| !s.is_empty() && !s.starts_with('{'))
        .unwrap_or_default()
}

/// The token of `Authorization: Bearer <token>`, the scheme matched in
/// any case (RFC 9110).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

async fn verified(parts: &Parts, state: &InternalState) -> Result<ServiceCaller, ApiError> {
    // A route is named by the last literal segment of its path template.
    let method = parts
        .extensions
        .get::<MatchedPath>()
        .map(|m| route_name(m.as_str()))
        .unwrap_or_default();
    check(&parts.headers, state, Some(method)).await
}

/// The caller of `headers`' token, allowed `method` (any route: None).
async fn check(
    headers: &HeaderMap,
    state: &InternalState,
    method: Option<&str>,
) -> Result<ServiceCaller, ApiError> {
    let token = bearer(headers).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "an identity token is required",
        )
    })?;
    let verified = match method {
        Some(method) => state.verifier.verify(token, method).await,
        None => state.verifier.verify_known(token).await,
    };
    match verified {
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

/// The routes of the internal port, with their document; a feed import
/// streams in at most `max_feed_bytes` (`CATALOG_IMPORT_MAX_BYTES`), other
/// bodies `MAX_BODY_BYTES`.
fn routes(max_feed_bytes: usize) -> OpenApiRouter<InternalState> {
    let small = OpenApiRouter::new()
        .routes(routes!(orders::set_status))
        .routes(routes!(orders::updates))
        .routes(routes!(events::list))
        .routes(routes!(events::deliveries))
        .routes(routes!(maintenance::reindex))
        .routes(routes!(maintenance::reload_content))
        .routes(routes!(catalog::put_product, catalog::delete_product))
        .routes(routes!(catalog::set_stock))
        .routes(routes!(export::export))
        .routes(routes!(promotions::set_promotions))
        .routes(routes!(markets::set_markets))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES));
    let feeds = OpenApiRouter::new()
        .routes(routes!(catalog::import))
        .layer(RequestBodyLimitLayer::new(max_feed_bytes));
    small.merge(feeds)
}

fn document(mut doc: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
    doc.info.title = "Storefront BFF: internal port".to_string();
    doc.info.version = "1.0".to_string();
    doc.info.description = Some(INTERNAL_DESCRIPTION.to_string());
    doc.info.contact = None;
    doc.info.license = None;
    let components = doc.components.get_or_insert_with(Default::default);
    components.schemas.insert(
        "ErrorBody".into(),
        <crate::error::ErrorBody as utoipa::PartialSchema>::schema(),
    );
    components.schemas.insert(
        "FieldError".into(),
        <crate::error::FieldError as utoipa::PartialSchema>::schema(),
    );
    components.security_schemes.insert(
        "BearerAuth".into(),
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("JWT")
                .description(Some(
                    "A cloud identity token (OIDC, audience INTERNAL_AUDIENCE) of an account INTERNAL_CALLERS allows for the route",
                ))
                .build(),
        )
        .into(),
    );
    doc
}

const INTERNAL_DESCRIPTION: &str = "The internal port of the Storefront BFF: never published. \
Every route needs `Authorization: Bearer <identity token>` of a service account that \
INTERNAL_CALLERS allows for it (a route is named by the last literal segment of its path: \
status, reindex, reload, products, stock, import, export, promotions, markets). 401 without a valid token, 403 for \
an account not allowed there, 429 over RATE_LIMIT_SERVICE (and, for reindex and reload, \
RATE_LIMIT_MAINTENANCE). Errors have the public API's shape.";

/// The port's document, to any caller `INTERNAL_CALLERS` names: what
/// the internal surface is, is not for everyone on the network.
async fn internal_openapi(State(state): State<InternalState>, headers: HeaderMap) -> Response {
    if let Err(e) = check(&headers, &state, None).await {
        return e.into_response();
    }
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.doc.as_str().to_owned(),
    )
        .into_response()
}

/// Nothing the internal port answers is for a cache to keep.
async fn no_store(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(req).await;
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-store"),
    );
    response
}

pub fn app(
    config: &GatewayConfig,
    downstreams: Arc<Downstreams>,
    limiter: Arc<Limiter>,
    tree: Arc<crate::documents::TreeDocument>,
) -> Router {
    let verifier = Arc::new(IdentityVerifier::new(config.internal_identity.clone()));
    let (router, doc) = routes(config.import_max_bytes).split_for_parts();
    let doc = Arc::new(document(doc).to_pretty_json().unwrap_or_default());
    let inner = router
        .route_layer(axum::middleware::from_fn(
            crate::middleware::path_ids::bounded_ids,
        ))
        .route("/internal/openapi.json", get(internal_openapi))
        .route("/docs", get(crate::reference::internal_page))
        .route(crate::reference::SCRIPT, get(crate::reference::script))
        .route(
            crate::reference::INTERNAL_SCRIPT,
            get(crate::reference::internal_script),
        )
        .fallback(|| async { ApiError::for_status(StatusCode::NOT_FOUND) })
        .with_state(InternalState {
            tree,
            product_url: config.acp.product_url.as_str().into(),
            limiter,
            downstreams,
            verifier,
            doc,
        });
    inner.layer(
        ServiceBuilder::new()
            .layer(axum::middleware::from_fn(errors::security_headers))
            .layer(axum::middleware::from_fn(no_store))
            .layer(axum::middleware::from_fn(errors::normalize))
            .layer(axum::middleware::from_fn(call_context::correlation_id))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(observe::TraceTrust::Everyone),
                observe::observe,
            ))
            .layer(CatchPanicLayer::custom(errors::panic_response)),
    )
}
