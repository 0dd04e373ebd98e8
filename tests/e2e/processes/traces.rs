//! One storefront request is one trace: the gateway and the services it
//! calls export their spans over OTLP/gRPC (to a receiver in this test),
//! and the spans share one trace id, each hop a child of the one before.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use reqwest::Method;
use serde_json::json;
use tokio_stream::wrappers::TcpListenerStream;

use super::Processes;
use crate::journey::{Shopper, buyable};

#[derive(Debug, Clone)]
struct Received {
    service: String,
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    /// The trace ids this span links to.
    links: Vec<String>,
    attributes: Vec<(String, String)>,
}

#[derive(Clone, Default)]
struct Receiver(Arc<Mutex<Vec<Received>>>);

fn text(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.clone()),
            any_value::Value::IntValue(i) => Some(i.to_string()),
            _ => None,
        }
    })
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = self.0.lock().unwrap();
        for resource in request.into_inner().resource_spans {
            let attributes = resource.resource.map(|r| r.attributes).unwrap_or_default();
            let service = text(&attributes, "service.name").unwrap_or_default();
            for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
                received.push(Received {
                    service: service.clone(),
                    name: span.name,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    links: span.links.iter().map(|l| hex(&l.trace_id)).collect(),
                    attributes: span
                        .attributes
                        .iter()
                        .filter_map(|kv| Some((kv.key.clone(), text(&span.attributes, &kv.key)?)))
                        .collect(),
                });
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Received {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

async fn otlp_receiver() -> (String, Receiver) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let receiver = Receiver::default();
    let service = TraceServiceServer::new(receiver.clone());
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpListenerStream::new(listener)),
    );
    (url, receiver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_is_one_trace_across_gateway_cart_and_catalog() {
    let (otlp, receiver) = otlp_receiver().await;
    let mesh = Processes::start(|_, env, _| {
        env.push(("OTEL_EXPORTER_OTLP_ENDPOINT".into(), otlp.clone()));
        env.push(("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()));
    })
    .await;
    let api = &mesh.api;
    let shopper = Shopper::new(api).await;
    let product = buyable(api, 1).await.remove(0).0;
    let cart = shopper.cart().await;
    // gateway -> cart -> catalog (pricing the line): three processes.
    let added = shopper
        .send(
            Method::POST,
            &format!("/carts/{cart}/line-items"),
            Some(json!({"productId": product, "variantId": 1, "quantity": 1})),
        )
        .await;
    assert_eq!(added.status, 200, "{}", added.body);
    let correlation = added.header("correlation-id").unwrap().to_owned();

    let (root, trace) = wait_for_trace(&receiver, &correlation).await;
    let of = |service: &str| -> Vec<&Received> {
        trace.iter().filter(|s| s.service == service).collect()
    };
    let cart_spans = of("cart");
    let call = cart_spans
        .iter()
        .find(|s| s.name.ends_with("/AddLineItem"))
        .unwrap_or_else(|| panic!("a cart span in the trace: {trace:#?}"));
    let gateway_ids: Vec<&str> = of("gateway").iter().map(|s| s.span_id.as_str()).collect();
    assert!(
        gateway_ids.contains(&call.parent_span_id.as_str()),
        "cart's span is the gateway's child"
    );
    let catalog = of("catalog");
    let pricing = catalog
        .iter()
        .find(|s| s.name.ends_with("/GetProduct"))
        .unwrap_or_else(|| panic!("a catalog span in the trace: {trace:#?}"));
    let cart_ids: Vec<&str> = cart_spans.iter().map(|s| s.span_id.as_str()).collect();
    assert!(
        cart_ids.contains(&pricing.parent_span_id.as_str()),
        "catalog's span is cart's child"
    );
    assert_eq!(root.attribute("correlation_id"), Some(correlation.as_str()));
    // The correlation id travels every hop, cart's call to the catalog
    // included (from the call's context, not a parameter).
    for span in [call, pricing] {
        assert_eq!(
            span.attribute("correlation_id"),
            Some(correlation.as_str()),
            "{span:#?}"
        );
    }

    // The gateway's log line for the request names the same trace (lines
    // reach stdout in batches: a moment later).
    let mut mesh = mesh;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let line = loop {
        let log = mesh.program("gateway").log();
        let found = log
            .lines()
            .find(|l| l.contains("request served") && l.contains(&correlation))
            .map(str::to_owned);
        match found {
            Some(line) => break line,
            None if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            None => panic!("a log line for {correlation}"),
        }
    };
    assert!(
        line.contains(&format!("\"trace_id\":\"{}\"", root.trace_id)),
        "{line}"
    );
}

/// A public client's `traceparent` is not adopted: its request gets a trace
/// of its own, linked to the one it sent (the client cannot choose trace
/// ids or sampling). From a trusted proxy (`TRUSTED_PROXIES`) it is
/// continued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_trusted_proxy_s_traceparent_is_continued() {
    let sent = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("00-{sent}-00f067aa0ba902b7-01");
    for trusted in [false, true] {
        let (otlp, receiver) = otlp_receiver().await;
        let mesh = Processes::start(|name, env, _| {
            env.push(("OTEL_EXPORTER_OTLP_ENDPOINT".into(), otlp.clone()));
            env.push(("OTEL_BSP_SCHEDULE_DELAY".into(), "100".into()));
            if trusted && name == "gateway" {
                env.push(("TRUSTED_PROXIES".into(), "127.0.0.1".into()));
            }
        })
        .await;
        let api = &mesh.api;
        let reply = api
            .send(
                api.get("/products?limit=1")
                    .header("traceparent", &traceparent),
            )
            .await;
        assert_eq!(reply.status, 200);
        let correlation = reply.header("correlation-id").unwrap().to_owned();
        let root = gateway_span(&receiver, &correlation).await;
        if trusted {
            assert_eq!(root.trace_id, sent, "a trusted proxy's trace is continued");
        } else {
            assert_ne!(root.trace_id, sent, "a client's trace id is not adopted");
            assert_eq!(root.links, [sent], "but linked");
            assert!(root.parent_span_id.is_empty(), "{root:#?}");
        }
    }
}

/// The gateway's span for `correlation`, once exported.
async fn gateway_span(receiver: &Receiver, correlation: &str) -> Received {
    for _ in 0..100 {
        let found = receiver
            .0
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.service == "gateway" && s.attribute("correlation_id") == Some(correlation))
            .cloned();
        if let Some(span) = found {
            return span;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no gateway span for {correlation}");
}

/// The gateway's root span for `correlation` and every span of its trace,
/// once the cart and catalog spans have arrived too.
async fn wait_for_trace(receiver: &Receiver, correlation: &str) -> (Received, Vec<Received>) {
    for _ in 0..100 {
        {
            let spans = receiver.0.lock().unwrap();
            let root = spans.iter().find(|s| {
                s.service == "gateway" && s.attribute("correlation_id") == Some(correlation)
            });
            if let Some(root) = root {
                let trace: Vec<Received> = spans
                    .iter()
                    .filter(|s| s.trace_id == root.trace_id)
                    .cloned()
                    .collect();
                let services = ["gateway", "cart", "catalog"];
                if services
                    .iter()
                    .all(|svc| trace.iter().any(|s| s.service == *svc))
                {
                    return (root.clone(), trace);
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let spans = receiver.0.lock().unwrap();
    panic!("no complete trace for {correlation}; received: {spans:#?}");
}
