//! Logging set-up and the request context that travels across hops.

use tower_http::classify::GrpcFailureClass;
use tower_http::trace::{DefaultOnRequest, TraceLayer};
use tracing::Span;
use tracing_subscriber::EnvFilter;

/// gRPC metadata / HTTP header carrying the correlation id between hops.
pub const CORRELATION_ID_HEADER: &str = "correlation-id";

/// Installs JSON logs filtered by `RUST_LOG` (default `info`), with the noisy
/// transport internals quietened. Safe to call more than once.
pub fn init_tracing() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,h2=warn,hyper=warn,tower=warn,tonic=warn"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(true)
        .with_env_filter(filter)
        .try_init();
}

type MakeSpan = fn(&http::Request<tonic::body::Body>) -> Span;
type OnFailure = fn(GrpcFailureClass, std::time::Duration, &Span);
type GrpcClassifier =
    tower_http::classify::SharedClassifier<tower_http::classify::GrpcErrorsAsFailures>;

/// The gRPC server's tracing layer.
pub type GrpcTraceLayer =
    TraceLayer<GrpcClassifier, MakeSpan, DefaultOnRequest, (), (), (), OnFailure>;

/// A span per gRPC call, named by method and carrying the correlation id.
pub fn grpc_trace_layer() -> GrpcTraceLayer {
    TraceLayer::new_for_grpc()
        .make_span_with(grpc_span as MakeSpan)
        .on_response(())
        .on_body_chunk(())
        .on_eos(())
        .on_failure(grpc_failure as OnFailure)
}

fn grpc_span(req: &http::Request<tonic::body::Body>) -> Span {
    let correlation_id = req
        .headers()
        .get(CORRELATION_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    tracing::info_span!("grpc", method = %req.uri().path(), correlation_id)
}

fn grpc_failure(class: GrpcFailureClass, latency: std::time::Duration, _span: &Span) {
    tracing::debug!(%class, latency_ms = latency.as_millis() as u64, "grpc call failed");
}
