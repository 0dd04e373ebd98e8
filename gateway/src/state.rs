//! What every handler shares.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use storefront_platform::store::Store;

use axum::extract::FromRef;
use bytes::Bytes;

use crate::bff_token::SharedAuth;
use crate::downstream::Downstreams;
use crate::ratelimit::middleware::RateLimits;

/// Layers and extractors take the part they need (`FromRef`), so none of
/// them depends on the whole.
#[derive(Clone, FromRef)]
pub struct AppState {
    /// Shared, not copied: axum clones the state for every extraction, and
    /// six callers with their channels cost a few percent of a request.
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
    /// The Agentic Commerce Protocol facade's own (`acp`).
    pub acp: Arc<crate::acp::facade::Facade>,
}
