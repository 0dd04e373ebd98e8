//! Logs, traces and metrics, set up once per process.
//!
//! Every request and gRPC call gets a span; spans go to an OpenTelemetry
//! tracer (exported over OTLP/gRPC when `OTEL_EXPORTER_OTLP_ENDPOINT` is
//! set) and log lines are JSON carrying the spans' correlation and trace ids.
//! W3C `traceparent` travels in gRPC metadata ([`propagation`]), so one
//! storefront request is one trace across every hop. Metrics are Prometheus
//! text on an internal port ([`metrics`]).

mod batched;
pub mod metrics;
mod propagation;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tower_http::classify::GrpcFailureClass;
use tower_http::trace::{DefaultOnRequest, TraceLayer};
use tracing::Span;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;
use tracing_subscriber::{EnvFilter, Layer};

pub use propagation::{continue_trace, inject_current_trace, link_trace};

/// gRPC metadata / HTTP header carrying the correlation id between hops.
pub const CORRELATION_ID_HEADER: &str = "correlation-id";

/// Keeps the tracer provider and the log writer so that buffered spans and
/// log lines are written at exit.
#[must_use = "drop the guard only at exit: it flushes buffered spans and log lines"]
pub struct Telemetry {
    provider: SdkTracerProvider,
    logs: batched::Flusher,
}

impl Telemetry {
    /// Flushes and stops the span exporter (if any), then writes the last
    /// log lines (the exporter's failure among them).
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "flushing spans failed");
        }
        drop(self.logs);
    }
}

/// JSON logs filtered by `RUST_LOG` (default `info`, transport internals
/// quietened), and spans for `service` sent to `otlp_endpoint` when given.
/// Without `traces`, no OpenTelemetry layer at all (no trace ids, no
/// propagation). Must run inside a Tokio runtime (the exporter is tonic).
pub fn init(service: &str, otlp_endpoint: Option<&str>, traces: bool) -> anyhow::Result<Telemetry> {
    let mut builder = SdkTracerProvider::builder().with_resource(
        Resource::builder()
            .with_service_name(service.to_owned())
            .build(),
    );
    if let Some(endpoint) = otlp_endpoint {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()?;
        builder = builder.with_batch_exporter(exporter);
    }
    let provider = builder.build();
    // Spans exist (and carry trace ids into logs and downstream calls) even
    // when nothing exports them. They track no busy/idle time and no thread
    // (a clock read on every poll, an allocation a span, and a task moves
    // between threads), and attach no OpenTelemetry context on each poll:
    // nothing reads `Context::current`, parents come from the tracing span.
    let otel = traces.then(|| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("storefront"))
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_context_activation(false)
            .with_filter(otel_targets())
    });
    let (lines, logs) = batched::batched(std::io::stdout());
    let _ = tracing_subscriber::registry()
        .with(json_logs(lines).with_filter(log_filter()))
        .with(otel)
        .try_init();
    Ok(Telemetry { provider, logs })
}

/// JSON logs only, for tests and tools that export no spans.
pub fn init_tracing() {
    let _ = tracing_subscriber::registry()
        .with(json_logs(std::io::stdout).with_filter(log_filter()))
        .try_init();
}

/// The JSON log lines every program writes, to `writer`: one object a line
/// with the event's fields, its target, its span and the list of spans it
/// is in (each with its fields). Public so that tests capture the same lines.
pub fn json_logs<S, W>(writer: W) -> json_subscriber::fmt::Layer<S, W>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + 'static,
{
    json_subscriber::fmt::layer()
        .with_current_span(true)
        .with_span_list(true)
        .with_writer(writer)
}

fn log_filter() -> EnvFilter {
    EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,h2=warn,hyper=warn,tower=warn,tonic=warn"))
}

/// The transport crates' own spans would bury ours: only our spans (and
/// anything else at info) are traced.
fn otel_targets() -> Targets {
    Targets::new()
        .with_default(tracing::Level::INFO)
        .with_target("h2", tracing::level_filters::LevelFilter::OFF)
        .with_target("hyper", tracing::level_filters::LevelFilter::OFF)
        .with_target("hyper_util", tracing::level_filters::LevelFilter::OFF)
        .with_target("tonic", tracing::level_filters::LevelFilter::OFF)
        .with_target("tower", tracing::level_filters::LevelFilter::OFF)
        .with_target("opentelemetry", tracing::level_filters::LevelFilter::OFF)
        .with_target(
            "opentelemetry_sdk",
            tracing::level_filters::LevelFilter::OFF,
        )
}

type MakeSpan = fn(&http::Request<tonic::body::Body>) -> Span;
type OnFailure = fn(GrpcFailureClass, std::time::Duration, &Span);
type GrpcClassifier =
    tower_http::classify::SharedClassifier<tower_http::classify::GrpcErrorsAsFailures>;

/// The gRPC server's tracing layer.
pub type GrpcTraceLayer =
    TraceLayer<GrpcClassifier, MakeSpan, DefaultOnRequest, (), (), (), OnFailure>;

/// A span per gRPC call, named by method, carrying the correlation id and
/// continuing the caller's trace.
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
    let span = tracing::info_span!(
        "grpc",
        otel.name = %req.uri().path(),
        otel.kind = "server",
        rpc.system = "grpc",
        method = %req.uri().path(),
        correlation_id,
        trace_id = tracing::field::Empty,
    );
    continue_trace(&span, req.headers());
    span
}

fn grpc_failure(class: GrpcFailureClass, latency: std::time::Duration, _span: &Span) {
    tracing::debug!(%class, latency_ms = latency.as_millis() as u64, "grpc call failed");
}
