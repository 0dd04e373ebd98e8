//! W3C trace context in and out: `traceparent` read from incoming HTTP/gRPC
//! headers and written into outgoing gRPC metadata.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct MetadataInjector<'a>(&'a mut MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(key), Ok(value)) = (
            MetadataKey::from_bytes(key.as_bytes()),
            MetadataValue::try_from(value),
        ) {
            self.0.insert(key, value);
        }
    }
}

/// Makes `span` a child of the trace `headers` carry (if any) and records
/// its trace id in the span's `trace_id` field, so every log line inside
/// shows it.
pub fn continue_trace(span: &Span, headers: &http::HeaderMap) {
    if headers.contains_key("traceparent") {
        let parent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
        // Fails only without an OpenTelemetry layer (some tests): no trace then.
        let _ = span.set_parent(parent);
    }
    let trace_id = span.context().span().span_context().trace_id();
    if trace_id != TraceId::INVALID {
        span.record("trace_id", tracing::field::display(trace_id));
    }
}

/// Starts `span` on a trace of its own, linked to the one `headers` carry
/// (if any): for callers who must not choose the trace id or the sampling
/// of what they cause (the public edge's clients).
pub fn link_trace(span: &Span, headers: &http::HeaderMap) {
    if headers.contains_key("traceparent") {
        let sent = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
        let sent = sent.span().span_context().clone();
        if sent.is_valid() {
            span.add_link(sent);
        }
    }
    let trace_id = span.context().span().span_context().trace_id();
    if trace_id != TraceId::INVALID {
        span.record("trace_id", tracing::field::display(trace_id));
    }
}

/// Writes the current span's trace context into `metadata` as `traceparent`.
pub fn inject_current_trace(metadata: &mut MetadataMap) {
    let cx = Span::current().context();
    if cx.span().span_context().is_valid() {
        TraceContextPropagator::new().inject_context(&cx, &mut MetadataInjector(metadata));
    }
}
