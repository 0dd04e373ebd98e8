//! The edge gateway: REST for storefronts, gRPC to the domain services.
//!
//! Layers, outermost first: error normaliser -> call context (correlation
//! id) -> observation (span, access log, metrics) -> header and raw-request
//! checks -> API version and route policy -> panic catcher -> body limit ->
//! rate limits -> router (caching, then the handler). Request bodies are
//! read through `ApiJson`, which answers 415/400/413/422 itself. The
//! version layer sits outside the router because it rewrites versioned
//! paths before routing; it resolves the route's [`policy`] on the path it
//! routes, once, for every layer inside it.

mod acp;
mod bff_token;
mod budget;

pub mod config;
pub mod cors;
mod demo_media;
mod documents;
pub mod downstream;
pub mod error;
/// Entry points for `fuzz/`, which turns on the `testsuite` feature; never
/// compiled into a program.
#[cfg(feature = "testsuite")]
#[doc(hidden)]
pub mod fuzzing;
mod internal;
pub mod middleware;
pub mod model;
mod openapi;
pub mod policy;
mod query;
mod ratelimit;
mod reference;
mod routes;
mod state;
mod token_cache;
pub mod transcode;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use utoipa_axum::routes;

use crate::bff_token::CustomerAuth;
pub use crate::config::GatewayConfig;
use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::middleware::json_body::MAX_BODY_BYTES;
use crate::middleware::{
    call_context, errors, header_size, observe, path_ids, raw_request, version,
};
use crate::policy::Policies;
use crate::ratelimit::middleware::{RateLimits, rate_limit};
use crate::ratelimit::{Limiter, LoginFailures, Scope, TrustedProxies};
use crate::state::AppState;
use storefront_platform::listen;
use storefront_platform::shutdown::{DrainTimes, drain};
use storefront_platform::store::Store;

async fn not_found() -> impl IntoResponse {
    ApiError::for_status(axum::http::StatusCode::NOT_FOUND)
}

/// Wraps a router in the edge layers every request passes through; spans
/// continue the trace context only of peers `trusted` (TRUSTED_PROXIES);
/// each request's route policy is resolved from `policies` once, by the
/// version layer, for the layers inside it.
pub fn with_edge_layers(
    inner: Router,
    cors: &cors::CorsConfig,
    trusted: &TrustedProxies,
    policies: &Policies,
) -> Router {
    let trust = Arc::new(observe::TraceTrust::Proxies(trusted.clone()));
    Router::new().fallback_service(inner).layer(
        ServiceBuilder::new()
            .layer(axum::middleware::from_fn(errors::security_headers))
            .layer(axum::middleware::from_fn(acp::guard::protocol_errors))
            .layer(cors.layer())
            .layer(axum::middleware::from_fn(errors::normalize))
            .layer(axum::middleware::from_fn(call_context::correlation_id))
            .layer(axum::middleware::from_fn_with_state(
                trust,
                observe::observe,
            ))
            .layer(axum::middleware::from_fn(header_size::limit_headers))
            .layer(axum::middleware::from_fn(raw_request::require_text))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(policies.clone()),
                version::api_version,
            ))
            .layer(CatchPanicLayer::custom(errors::panic_response))
            .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES)),
    )
}

/// The OpenAPI document the gateway configured by `config` serves at
/// `/openapi.json`, pretty-printed (`storefront openapi` writes it to the
/// repository's `openapi.json`).
pub fn openapi_json(config: &GatewayConfig) -> anyhow::Result<String> {
    let (_, mut doc) = routes::api(&config.cache)
        .routes(routes!(openapi::document))
        .split_for_parts();
    openapi::complete(&mut doc, &config.document, config.idempotency_ttl);
    Ok(doc.to_pretty_json()?)
}

/// The whole HTTP application for `downstreams`; `store` holds the shared
/// session revocations.
pub fn app(
    config: &GatewayConfig,
    downstreams: Arc<Downstreams>,
    store: Store,
    limiter: Arc<Limiter>,
    ready: Arc<AtomicBool>,
    tree: Arc<documents::TreeDocument>,
) -> anyhow::Result<Router> {
    let (router, mut doc) = routes::api(&config.cache)
        .routes(routes!(openapi::document))
        .split_for_parts();
    openapi::complete(&mut doc, &config.document, config.idempotency_ttl);
    let openapi = bytes::Bytes::from(doc.to_json()?);
    let fail_closed = &config.rate_limits.fail_closed;
    let login_failures = LoginFailures::new(
        limiter.quota(Scope::LoginEmail),
        limiter.quota(Scope::LoginAccount),
        store.clone(),
        fail_closed.contains(&Scope::LoginEmail) || fail_closed.contains(&Scope::LoginAccount),
    );
    let limits = Arc::new(RateLimits {
        limiter,
        trusted: config.rate_limits.trusted_proxies.clone(),
        login_failures,
    });
    // Behind an Arc: axum clones the state for every extraction.
    let redis = matches!(store, Store::Redis(_)).then(|| Arc::new(store.clone()));
    let auth = Arc::new(CustomerAuth::new(
        &config.token_issuer,
        &config.token_audience,
        store.clone(),
    ));
    let idempotency = Arc::new(middleware::idempotency::Idempotency {
        store: store.clone(),
        ttl: config.idempotency_ttl,
        allowed: middleware::idempotency_allowance::Allowed {
            store: store.clone(),
            ttl: config.idempotency_ttl,
            limits: config.idempotency_allowances,
        },
        auth: auth.clone(),
    });
    let acp_guard = Arc::new(acp::guard::Guard {
        agents: config.acp.agents.clone(),
        limiter: limits.limiter.clone(),
    });
    let facade = Arc::new(acp::facade::Facade {
        store: store.clone(),
        order_url: config.acp.order_url.clone(),
        base_url: config.acp.base_url.clone(),
    });
    let state = AppState::new(state::Shared {
        tree,
        suggestions: Arc::default(),
        product_json: transcode::ProductJson::new(config.product_json_bytes),
        summaries: Default::default(),
        acp: facade,
        downstreams,
        redis,
        auth,
        limits,
        ready,
        openapi,
        local_pages: !config.program.environment.refuses_dev_shortcuts(),
    });
    // The MCP tools call the whole app in process: it is set once built.
    let whole: acp::mcp::AppHandle = Arc::new(std::sync::OnceLock::new());
    let inner = router
        .merge(acp::routes())
        .nest_service("/mcp", acp::mcp::service(whole.clone(), config.acp.hosts()))
        .route_layer(axum::middleware::from_fn(observe::matched_route))
        .route_layer(axum::middleware::from_fn(path_ids::bounded_ids))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .fallback(not_found)
        // Inside the rate limit, which verified the token it is scoped by.
        .layer(axum::middleware::from_fn_with_state(
            idempotency,
            middleware::idempotency::idempotency,
        ))
        // Outside idempotency: an agent's keys are its own.
        .layer(axum::middleware::from_fn_with_state(
            acp_guard,
            acp::guard::guard,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rate_limit,
        ))
        .with_state(state);
    let app = with_edge_layers(
        inner,
        &config.cors,
        &config.rate_limits.trusted_proxies,
        &config.policies,
    );
    let _ = whole.set(app.clone());
    Ok(app)
}

/// Runs the gateway as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_platform::env::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = GatewayConfig::from_env(&env)?;
    let store = Store::open(config.redis.as_ref(), "sf:").await?;
    let listener = listen::bind(config.program.listen_addr)?;
    let internal = listen::bind(config.internal_addr)?;
    serve(config, store, listener, internal, shutdown).await
}

/// Forgets idle rate-limit keys every minute: a flood of distinct keys
/// (addresses, tokens) is dropped once its budgets are whole again.
fn prune_on_a_timer(limiter: Arc<Limiter>, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            tokio::select! {
                _ = every.tick() => limiter.prune(),
                () = shutdown.cancelled() => break,
            }
        }
    });
}

/// Serves the gateway on `listener` (public) and `internal` (fulfilment)
/// until `shutdown`, then fails readiness, keeps serving for the shutdown
/// delay and drains in-flight requests for at most the drain timeout.
pub async fn serve(
    config: GatewayConfig,
    store: Store,
    listener: TcpListener,
    internal: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let ready = Arc::new(AtomicBool::new(true));
    let downstreams = Arc::new(Downstreams::new(&config.calls)?);
    let rl = &config.rate_limits;
    let limiter = Limiter::new(rl.quotas.clone(), &store, rl.fail_closed.clone());
    prune_on_a_timer(limiter.clone(), shutdown.clone());
    let tree = Arc::new(documents::TreeDocument::default());
    let app = app(
        &config,
        downstreams.clone(),
        store,
        limiter.clone(),
        ready.clone(),
        tree.clone(),
    )?;
    let internal_app = internal::app(&config, downstreams, limiter, tree);
    tracing::info!(
        addr = %listener.local_addr()?,
        internal = %internal.local_addr()?,
        environment = %config.program.environment,
        "gateway listening"
    );
    // Shutdown: readiness fails at once, then the shared drain sequence
    // (requests accepted for the shutdown delay while Kubernetes takes the
    // pod out of its endpoints, then in-flight ones drain).
    let delay = config.program.shutdown_delay;
    let not_ready = async move {
        ready.store(false, Ordering::Release);
        tracing::info!(delay_ms = delay.as_millis() as u64, "not ready; draining");
    };
    let times = DrainTimes {
        delay,
        timeout: config.program.drain_timeout,
    };
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let drained = drain(shutdown, times, not_ready, |stop_accepting| async move {
        // Without TCP_NODELAY a reply written in two parts waits on the
        // client's delayed ACK (40 ms) on an otherwise idle connection.
        let nodelay = |tcp: &mut tokio::net::TcpStream| {
            let _ = tcp.set_nodelay(true);
        };
        let (listener, internal) = (listener.tap_io(nodelay), internal.tap_io(nodelay));
        let public = axum::serve(listener, app)
            .with_graceful_shutdown(stop_accepting.clone().cancelled_owned());
        let internal = axum::serve(internal, internal_app)
            .with_graceful_shutdown(stop_accepting.cancelled_owned());
        tokio::try_join!(public.into_future(), internal.into_future()).map(|_| ())
    })
    .await?;
    if !drained {
        tracing::warn!("drain timeout reached, dropping in-flight requests");
    }
    tracing::info!("gateway stopped");
    Ok(())
}

#[cfg(test)]
mod edge_tests;
