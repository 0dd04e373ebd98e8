//! The context a gRPC call runs in: the correlation id it arrived with,
//! for the calls it makes in turn. A server layer keeps it in a task-local
//! for the length of the call, and [`Peer::request`] reads it from there,
//! so domain code never passes it along (the trace context travels the
//! same way, in the current span).
//!
//! [`Peer::request`]: crate::client::Peer::request

use std::future::Future;
use std::task::{Context, Poll};

use tokio::task::futures::TaskLocalFuture;
use tonic::metadata::{Ascii, MetadataValue};
use tower::{Layer, Service};

use crate::telemetry::CORRELATION_ID_HEADER;

type CorrelationId = Option<MetadataValue<Ascii>>;

tokio::task_local! {
    static CORRELATION: CorrelationId;
}

/// The correlation id of the call being served, if it came with one.
pub fn correlation() -> CorrelationId {
    CORRELATION.try_with(Clone::clone).ok().flatten()
}

/// Runs `work` as part of a call correlated by `id`.
pub fn correlated<F: Future>(id: CorrelationId, work: F) -> TaskLocalFuture<CorrelationId, F> {
    CORRELATION.scope(id, work)
}

/// Serves each call inside its own correlation id's scope.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallContextLayer;

impl<S> Layer<S> for CallContextLayer {
    type Service = CallContextService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CallContextService(inner)
    }
}

#[derive(Debug, Clone)]
pub struct CallContextService<S>(S);

impl<S, B> Service<http::Request<B>> for CallContextService<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = TaskLocalFuture<CorrelationId, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let id = request
            .headers()
            .get(CORRELATION_ID_HEADER)
            .and_then(|v| MetadataValue::try_from(v.as_bytes()).ok());
        correlated(id, self.0.call(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_sees_its_own_id_and_none_outside() {
        assert_eq!(correlation(), None);
        let mut service = CallContextLayer.layer(tower::service_fn(|_: http::Request<()>| async {
            Ok::<_, std::convert::Infallible>(correlation())
        }));
        let request = http::Request::builder()
            .header(CORRELATION_ID_HEADER, "abc-123")
            .body(())
            .unwrap();
        let seen = service.call(request).await.unwrap();
        assert_eq!(seen.as_ref().map(|v| v.to_str().unwrap()), Some("abc-123"));
        let seen = service.call(http::Request::new(())).await.unwrap();
        assert_eq!(seen, None);
        assert_eq!(correlation(), None);
    }
}
