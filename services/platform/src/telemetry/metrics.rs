//! Prometheus metrics: one process-wide recorder behind the `metrics`
//! facade, rendered at `GET /metrics` on the program's metrics port
//! (`METRICS_LISTEN_ADDR`), which the Helm chart's annotations scrape.
//!
//! Names: `http_requests_total` / `http_request_duration_seconds` (gateway,
//! per route template, method and status), `grpc_server_requests_total` /
//! `grpc_server_request_duration_seconds` (per gRPC method and status code),
//! `store_operation_duration_seconds` (Redis, per operation),
//! `rate_limit_rejections_total` (per scope), `downstream_circuit_open` and
//! `downstream_calls_refused_total` (per downstream; refused: `shed` or
//! `circuit_open`), `catalog_version` (the catalog's version served) and
//! `search_index_catalog_version` (the version search has indexed; their
//! difference is search's lag).

use std::future::Future;
use std::sync::Arc;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use futures::future::BoxFuture;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Latency buckets (seconds): sub-millisecond in-process hops up to the
/// longest gateway deadline.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), LATENCY_BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new())
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed (a test harness): the
        // handle then renders nothing, which is all it can honestly do.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Serves `GET /metrics` on `listener` until `shutdown`.
pub async fn serve(listener: TcpListener, shutdown: CancellationToken) -> std::io::Result<()> {
    let recorder = handle();
    let upkeep = shutdown.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(5));
        loop {
            tokio::select! {
                _ = tick.tick() => recorder.run_upkeep(),
                () = upkeep.cancelled() => break,
            }
        }
    });
    let app = Router::new().route("/metrics", get(move || async move { recorder.render() }));
    tracing::info!(addr = %listener.local_addr()?, "metrics listening");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

/// Times a Redis operation into `store_operation_duration_seconds`. The
/// operation runs on the heap: a Redis command's future is about 4 KB,
/// and held inline it would be part of every future that awaits a store
/// call, copied whenever one of them moves (a checkout's futures nest
/// several deep).
pub fn time_store<'a, T: 'a>(
    op: &'static str,
    work: impl Future<Output = T> + Send + 'a,
) -> BoxFuture<'a, T> {
    Box::pin(async move {
        let started = Instant::now();
        let out = work.await;
        metrics::histogram!("store_operation_duration_seconds", "op" => op)
            .record(started.elapsed().as_secs_f64());
        out
    })
}

/// Counts and times every gRPC call a server answers.
#[derive(Clone, Copy, Default)]
pub struct GrpcMetricsLayer;

impl<S> tower::Layer<S> for GrpcMetricsLayer {
    type Service = GrpcMetrics<S>;
    fn layer(&self, inner: S) -> GrpcMetrics<S> {
        GrpcMetrics { inner }
    }
}

#[derive(Clone)]
pub struct GrpcMetrics<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for GrpcMetrics<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<R>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<http::Response<R>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let method: Arc<str> = req.uri().path().into();
        let started = Instant::now();
        let call = self.inner.call(req);
        Box::pin(async move {
            let response = call.await?;
            // Errors answer trailers-only, so grpc-status is in the headers;
            // without it the call succeeded (its status is in the trailers).
            let code = response
                .headers()
                .get("grpc-status")
                .and_then(|v| v.to_str().ok())
                .map_or_else(|| "0".to_owned(), str::to_owned);
            let elapsed = started.elapsed().as_secs_f64();
            metrics::histogram!("grpc_server_request_duration_seconds", "method" => method.clone())
                .record(elapsed);
            metrics::counter!("grpc_server_requests_total", "method" => method, "code" => code)
                .increment(1);
            Ok(response)
        })
    }
}

/// Whether calls to `downstream` are paused by its circuit breaker.
pub fn circuit(downstream: &'static str, open: bool) {
    metrics::gauge!("downstream_circuit_open", "downstream" => downstream).set(if open {
        1.0
    } else {
        0.0
    });
}

/// A call to `downstream` not sent: `shed` (as many in flight as allowed)
/// or `circuit_open`.
pub fn refused(downstream: &'static str, reason: &'static str) {
    metrics::counter!("downstream_calls_refused_total", "downstream" => downstream, "reason" => reason)
        .increment(1);
}

/// A catalog version now served (`catalog_version`) or indexed
/// (`search_index_catalog_version`).
pub fn catalog_version(name: &'static str, version: u64) {
    metrics::gauge!(name).set(version as f64);
}
