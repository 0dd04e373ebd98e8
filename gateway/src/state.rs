//! What every handler shares.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bytes::Bytes;

use crate::downstream::Downstreams;

#[derive(Clone)]
pub struct AppState {
    pub downstreams: Downstreams,
    /// False once shutdown began: readiness fails first, then connections drain.
    pub ready: Arc<AtomicBool>,
    /// The OpenAPI document, serialised once at start.
    pub openapi: Bytes,
}
