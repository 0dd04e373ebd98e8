//! What every handler shares.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use storefront_platform::store::Store;

use axum::extract::FromRef;
use bytes::Bytes;

use crate::bff_token::SharedAuth;
use crate::downstream::Downstreams;
use crate::ratelimit::middleware::RateLimits;

/// What every handler shares, behind one `Arc`: axum clones the state for
/// each extraction, a handler's and its layers', and a clone of every
/// field's count was 1.3% of a listing's CPU (each count a cache line the
/// two cores passed back and forth). Layers and extractors take the
/// part they need (`FromRef`), so none of them depends on the whole.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl FromRef<AppState> for Arc<Downstreams> {
    fn from_ref(state: &AppState) -> Self {
        state.downstreams.clone()
    }
}

impl FromRef<AppState> for SharedAuth {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}

impl FromRef<AppState> for Arc<RateLimits> {
    fn from_ref(state: &AppState) -> Self {
        state.limits.clone()
    }
}

pub struct Shared {
    pub downstreams: Arc<Downstreams>,
    /// The Redis holding sessions and budgets, which readiness checks
    /// (none in memory).
    pub redis: Option<Arc<Store>>,
    /// Customer token verification.
    pub auth: SharedAuth,
    pub limits: Arc<RateLimits>,
    /// False once shutdown began: readiness fails first, then connections drain.
    pub ready: Arc<AtomicBool>,
    /// The OpenAPI document, serialised once at start.
    pub openapi: Bytes,
    /// Local and development: `/` leads to the reference, and the demo
    /// catalog's pictures are drawn (`demo_media`).
    pub local_pages: bool,
    /// The category tree's JSON, held (`documents`).
    pub tree: Arc<crate::documents::TreeDocument>,
    /// Suggestion answers reused for half a second (`documents`).
    pub suggestions: Arc<crate::documents::Suggestions>,
    /// Products' JSON as written before (`PRODUCT_JSON_CACHE_MB`).
    pub product_json: crate::transcode::ProductJson,
    /// What listings' compressed products are compressed against.
    pub summaries: crate::downstream::summaries::Summaries,
    /// The Agentic Commerce Protocol facade's own (`acp`).
    pub acp: Arc<crate::acp::facade::Facade>,
}
