//! At most a set number of calls in flight to one peer; the excess is
//! refused at once ([`Shed`]) rather than queued: a burst of slow calls
//! costs a fast 503 to the excess, not a pile-up of deadlines that would
//! look like the peer failing.
//!
//! Not tower's `LoadShed<ConcurrencyLimit<_>>`, which sheds whenever the
//! limit (or the channel under it) answers `Pending`: tokio's semaphores
//! and channels also answer `Pending` when the calling task has spent its
//! cooperative budget, a yield that says nothing about the peer. Under load
//! about one call in 40,000 was refused that way with every permit free
//! (503 `DOWNSTREAM_BUSY` on `/customers/me`, once per bench run). Here a
//! permit is taken without waiting (`try_acquire`, outside the budget), and
//! the channel's own readiness is waited for, never shed.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{BoxError, Service};

/// A call refused because the peer had as many calls in flight as allowed.
#[derive(Debug)]
pub struct Shed;

impl std::fmt::Display for Shed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("too many calls in flight to this peer")
    }
}

impl std::error::Error for Shed {}

/// `inner` with at most as many calls in flight as `permits` holds (shared
/// by every clone).
pub struct Limited<S> {
    inner: S,
    permits: Arc<Semaphore>,
    /// Taken in `poll_ready`, held by the call until its answer; none when
    /// every permit was out (the call is then shed).
    permit: Option<OwnedSemaphorePermit>,
}

impl<S> Limited<S> {
    pub fn new(inner: S, max: usize) -> Self {
        Self {
            inner,
            permits: Arc::new(Semaphore::new(max.max(1))),
            permit: None,
        }
    }
}

impl<S: Clone> Clone for Limited<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            permits: self.permits.clone(),
            permit: None,
        }
    }
}

impl<S, R> Service<R> for Limited<S>
where
    S: Service<R>,
    S::Response: Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        if self.permit.is_none() {
            match self.permits.clone().try_acquire_owned() {
                Ok(permit) => self.permit = Some(permit),
                // Ready to refuse: `call` sheds.
                Err(_) => return Poll::Ready(Ok(())),
            }
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let Some(permit) = self.permit.take() else {
            return Box::pin(std::future::ready(Err(Box::new(Shed) as BoxError)));
        };
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into);
            drop(permit);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;

    use tonic::transport::Endpoint;
    use tower::ServiceExt;

    use super::*;

    fn request() -> http::Request<tonic::body::Body> {
        http::Request::new(tonic::body::Body::empty())
    }

    /// A task that has spent its cooperative budget gets `Pending` from
    /// tokio's semaphores and channels: its call waits a turn and goes
    /// out; it is not refused as if the peer were full (tower's
    /// `LoadShed<ConcurrencyLimit<_>>` refused it).
    #[tokio::test]
    async fn a_task_out_of_budget_waits_its_turn_not_shed() {
        // Nothing listens there: the call goes out and fails to connect.
        let channel = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        let mut limited = Limited::new(channel, 8);
        // The budget spent within one poll, then the call's readiness asked.
        let readiness = std::future::poll_fn(|cx| {
            while tokio::task::coop::has_budget_remaining() {
                let _ = pin!(tokio::task::coop::consume_budget()).poll(cx);
            }
            Poll::Ready(limited.poll_ready(cx))
        })
        .await;
        let answer = match readiness {
            Poll::Ready(ready) => {
                ready.unwrap();
                limited.call(request()).await
            }
            Poll::Pending => limited.ready().await.unwrap().call(request()).await,
        };
        let error = answer.expect_err("nothing listens on port 9");
        assert!(!error.is::<Shed>(), "shed with every permit free: {error}");
    }

    /// Past the limit, a call is refused at once; a permit given back
    /// lets the next one through.
    #[tokio::test]
    async fn calls_past_the_limit_are_shed_at_once() {
        let channel = Endpoint::from_static("http://127.0.0.1:9").connect_lazy();
        let mut first = Limited::new(channel, 1);
        let mut second = first.clone();
        first.ready().await.unwrap();
        let refused = second.ready().await.unwrap().call(request()).await;
        assert!(refused.expect_err("over the limit").is::<Shed>());
        let failed = first.call(request()).await.expect_err("nothing listens");
        assert!(!failed.is::<Shed>());
        let again = second.ready().await.unwrap().call(request()).await;
        assert!(!again.expect_err("nothing listens").is::<Shed>());
    }
}
