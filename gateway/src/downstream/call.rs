//! One call to a downstream, whatever the method: the identity token,
//! correlation id and deadline on the request, the circuit breaker before
//! and after, and retries for the methods declared idempotent reads.

use std::time::Duration;

use storefront_common::client::is_shed;
use tonic::metadata::MetadataValue;
use tower::retry::budget::Budget;

use super::{Downstream, Downstreams};
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;

/// What a method may be retried for, declared with the method
/// (`clients.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Idempotent: retried with jittered exponential back-off while the
    /// downstream is unreachable, within the retry budget.
    Read,
    /// Sent once: a retry could apply it twice.
    Write,
}

/// Retries of an idempotent read after a downstream was unreachable.
const MAX_RETRIES: u32 = 3;
/// The first back-off; it doubles, with up to ±50% jitter.
const BASE_BACKOFF: Duration = Duration::from_millis(50);

fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF * 2u32.pow(attempt);
    base.mul_f64(0.5 + fastrand::f64())
}

impl Downstreams {
    /// Calls `to` with `message` under `policy`. A route's own deadline
    /// holds the call, even against a downstream that never answers.
    pub(crate) async fn call<M, R, F, Fut>(
        &self,
        to: &Downstream,
        context: &CallContext,
        policy: Policy,
        message: M,
        call: F,
    ) -> Result<R, ApiError>
    where
        M: Clone,
        F: Fn(tonic::Request<M>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let retries = match policy {
            Policy::Read => {
                self.retry_budget.deposit();
                MAX_RETRIES
            }
            Policy::Write => 0,
        };
        let mut attempt = 0;
        let outcome = loop {
            let request = self.request(to, context, message.clone()).await?;
            let result = match context.deadline {
                Some(d) => tokio::time::timeout(d, call(request))
                    .await
                    .unwrap_or_else(|_| {
                        Err(tonic::Status::deadline_exceeded("route deadline passed"))
                    }),
                None => call(request).await,
            };
            match result {
                Err(status)
                    if status.code() == tonic::Code::Unavailable
                        && attempt < retries
                        && self.retry_budget.withdraw() =>
                {
                    tracing::debug!(
                        downstream = to.name(),
                        attempt,
                        "retrying an unreachable downstream"
                    );
                    tokio::time::sleep(backoff(attempt)).await;
                    attempt += 1;
                }
                outcome => break outcome,
            }
        };
        record(to, &outcome);
        Ok(outcome?.into_inner())
    }

    /// Wraps `message` for a call to `to`; refused at once (503
    /// `CIRCUIT_OPEN`) while `to`'s circuit is open.
    async fn request<T>(
        &self,
        to: &Downstream,
        context: &CallContext,
        message: T,
    ) -> Result<tonic::Request<T>, ApiError> {
        if !to.breaker.allows() {
            let message = format!("{} is failing; calls are paused briefly", to.name());
            return Err(ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                "CIRCUIT_OPEN",
                message,
            ));
        }
        let id = MetadataValue::try_from(context.correlation_id.as_bytes()).ok();
        let mut request = to
            .peer
            .request_with(id.as_ref(), message)
            .await
            .map_err(|e| ApiError::unavailable(to.name(), e))?;
        // The route's own deadline travels as grpc-timeout (the channel's is the cap).
        if let Some(deadline) = context.deadline {
            request.set_timeout(deadline);
        }
        Ok(request)
    }
}

/// Feeds `to`'s breaker with one call's outcome (reads and writes alike).
/// It counts calls, not attempts: one read that exhausted its retries is
/// one failure. Only the downstream failing counts: a deadline may be one
/// expensive request's own (heavy queries must not open the circuit for
/// everyone), and a shed call was never sent; the concurrency limit
/// bounds what a hung downstream holds. Any answer, an error included,
/// shows the downstream is up.
fn record<R>(to: &Downstream, outcome: &Result<R, tonic::Status>) {
    match outcome {
        Err(s) if s.code() == tonic::Code::Unavailable => {
            if to.breaker.failed() {
                tracing::warn!(downstream = to.name(), "circuit opened");
            }
        }
        Err(s)
            if is_shed(s)
                || matches!(
                    s.code(),
                    tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
                ) => {}
        _ => to.breaker.succeeded(),
    }
}
