//! Liveness and readiness probes: no auth, no version header.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use storefront_platform::store::Store;

use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `live` or `ready`.
    pub status: &'static str,
    /// Each downstream service and whether it is serving.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<&'static str, &'static str>,
}

/// The process is up.
#[utoipa::path(get, path = "/health/live", tag = "Health",
    responses((status = 200, description = "Alive", body = Health)))]
pub async fn live() -> Json<Health> {
    Json(Health {
        status: "live",
        checks: BTreeMap::new(),
    })
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReadyQuery {
    /// `false`: only whether this gateway takes traffic (not shutting
    /// down), for orchestrator readiness probes, so that one failing
    /// service does not take every gateway out of rotation. Default `true`.
    pub downstreams: Option<bool>,
}

/// How long readiness waits for Redis's PING.
const REDIS_PING: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether Redis answers, when the gateway's state is there.
async fn redis_answers(redis: Option<&Store>) -> Option<bool> {
    let ping = tokio::time::timeout(REDIS_PING, redis?.ping()).await;
    Some(matches!(ping, Ok(Ok(()))))
}

/// Every downstream the gateway needs is serving (and Redis answers, when
/// the state is there).
#[utoipa::path(get, path = "/health/ready", tag = "Health", params(ReadyQuery),
    responses(
        (status = 200, description = "Ready for traffic; `checks.redis` is `degraded` while a Redis Cluster shard has no connected replica (its writes are not waited for until one is back)", body = Health),
        (status = 400, description = "INVALID_QUERY_PARAMETER: downstreams is not true or false", body = ErrorBody),
        (status = 503, description = "NOT_READY: shutting down; the file REDIS_URL came from names another server (restart: the message says which), even with `downstreams=false`; or the failing downstreams (and `redis`, when it does not answer) are named in `errors`", body = ErrorBody),
    ))]
pub async fn ready(
    State(state): State<AppState>,
    Query(query): Query<ReadyQuery>,
) -> Result<Json<Health>, ApiError> {
    if !state.ready.load(Ordering::Acquire) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "NOT_READY",
            "the gateway is shutting down",
        ));
    }
    // Its Redis address changed under it: out of rotation until restarted,
    // whatever the probe asks (two gateways on two servers split carts).
    if let Some(why) = state.redis.as_deref().and_then(Store::refusal) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "NOT_READY",
            why,
        ));
    }
    if query.downstreams == Some(false) {
        return Ok(Json(Health {
            status: "ready",
            checks: BTreeMap::new(),
        }));
    }
    let downstreams = state.downstreams.all();
    let serving = futures::future::join(
        futures::future::join_all(downstreams.iter().map(|d| d.serving())),
        redis_answers(state.redis.as_deref()),
    );
    let (serving, redis) = serving.await;
    let mut named: Vec<(&'static str, bool)> =
        downstreams.iter().map(|d| d.name()).zip(serving).collect();
    named.extend(redis.map(|ok| ("redis", ok)));
    // A cluster shard left without a replica (after a failover) still
    // serves; its writes are not waited for until one is back.
    let degraded = state
        .redis
        .as_deref()
        .is_some_and(|r| r.primaries_without_replica() > 0);
    let mut checks = BTreeMap::new();
    let mut error: Option<ApiError> = None;
    for (name, ok) in named {
        let shown = match (ok, name) {
            (true, "redis") if degraded => "degraded",
            (true, _) => "serving",
            (false, _) => "not_serving",
        };
        checks.insert(name, shown);
        if !ok {
            let e = error.take().unwrap_or_else(|| {
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "NOT_READY",
                    "a downstream service is not serving",
                )
            });
            error = Some(e.field(name, "UNAVAILABLE", format!("{name} is not serving")));
        }
    }
    match error {
        Some(mut e) => {
            let names: Vec<&str> = e.errors.iter().map(|f| f.field.as_str()).collect();
            e.message = format!("not ready: {} not serving", names.join(", ")).into();
            Err(e)
        }
        None => Ok(Json(Health {
            status: "ready",
            checks,
        })),
    }
}
