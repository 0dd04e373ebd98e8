//! Per-route downstream deadlines (`ROUTE_TIMEOUTS`).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// A route's own downstream deadline.
#[derive(Debug, Clone, Copy)]
pub struct RouteDeadline(pub Duration);

/// Marks requests under a configured path prefix with its deadline (the
/// longest prefix wins).
pub async fn route_deadline(
    State(routes): State<Arc<Vec<(String, Duration)>>>,
    mut req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let best = routes
        .iter()
        .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
        .max_by_key(|(p, _)| p.len());
    if let Some(&(_, deadline)) = best {
        req.extensions_mut().insert(RouteDeadline(deadline));
    }
    next.run(req).await
}
