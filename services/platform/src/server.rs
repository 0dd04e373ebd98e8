//! Bootstrap of a gRPC service: health, identity checks, request spans,
//! graceful shutdown with a drain deadline.

use std::convert::Infallible;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::body::Body;
use tonic::server::NamedService;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use tower::Service;

use crate::call_context::CallContextLayer;
use crate::identity::layer::IdentityLayer;
use crate::identity::verifier::IdentityVerifier;
use crate::settings::{Reflection, ServiceSettings};
use crate::shutdown::{DrainTimes, drain};
use crate::telemetry::grpc_trace_layer;
use crate::telemetry::metrics::GrpcMetricsLayer;

/// The health service name that answers SERVING from start to exit:
/// what a liveness probe asks (`grpc: {service: liveness}`), so that a
/// program waiting on a dependency, or draining, is never restarted for it.
pub const LIVENESS: &str = "liveness";

/// A tonic service the server can add: what every service crate serves.
pub trait GrpcService:
    Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
    + NamedService
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> GrpcService for S where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + NamedService
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// Serves `service` (plus `grpc.health.v1`) on `listener` until `shutdown` is
/// cancelled, then reports NOT_SERVING, keeps serving for the shutdown
/// delay, and drains in-flight calls for at most the drain timeout.
pub async fn serve_grpc<S>(
    settings: &ServiceSettings,
    service: S,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()>
where
    S: GrpcService,
    S::Future: Send + 'static,
{
    serve(
        settings,
        service,
        listener,
        shutdown,
        None::<std::future::Ready<()>>,
        None,
    )
    .await
}

/// As `serve_grpc`, for a service keeping its state in a store that may
/// refuse (`Store::refusals`: its Redis moved): NOT_SERVING from then on,
/// with why in the log.
pub async fn serve_grpc_on<S>(
    settings: &ServiceSettings,
    service: S,
    listener: TcpListener,
    shutdown: CancellationToken,
    refusals: tokio::sync::watch::Receiver<Option<String>>,
) -> anyhow::Result<()>
where
    S: GrpcService,
    S::Future: Send + 'static,
{
    let ready = None::<std::future::Ready<()>>;
    serve(settings, service, listener, shutdown, ready, Some(refusals)).await
}

/// As `serve_grpc`, for a service that listens before it can answer:
/// `liveness` is SERVING at once, the service (and `""`, what readiness
/// asks) only once `ready` completes, and never after shutdown began.
pub async fn serve_grpc_once_ready<S, R>(
    settings: &ServiceSettings,
    service: S,
    listener: TcpListener,
    shutdown: CancellationToken,
    ready: R,
) -> anyhow::Result<()>
where
    S: GrpcService,
    S::Future: Send + 'static,
    R: std::future::Future<Output = ()> + Send + 'static,
{
    serve(settings, service, listener, shutdown, Some(ready), None).await
}

/// Both of the above: `ready` None when the service answers at once.
async fn serve<S, R>(
    settings: &ServiceSettings,
    service: S,
    listener: TcpListener,
    shutdown: CancellationToken,
    ready: Option<R>,
    refusals: Option<tokio::sync::watch::Receiver<Option<String>>>,
) -> anyhow::Result<()>
where
    S: GrpcService,
    S::Future: Send + 'static,
    R: std::future::Future<Output = ()> + Send + 'static,
{
    let (reporter, health) = tonic_health::server::health_reporter();
    if let Some(refusals) = refusals {
        tokio::spawn(refuse_when_told::<S>(reporter.clone(), refusals));
    }
    let now = match ready {
        None => ServingStatus::Serving,
        Some(_) => ServingStatus::NotServing,
    };
    for name in [S::NAME, ""] {
        reporter.set_service_status(name, now).await;
    }
    reporter
        .set_service_status(LIVENESS, ServingStatus::Serving)
        .await;
    let becoming_ready = {
        let reporter = reporter.clone();
        tokio::spawn(async move {
            let Some(ready) = ready else { return };
            ready.await;
            reporter
                .set_service_status(S::NAME, ServingStatus::Serving)
                .await;
            reporter
                .set_service_status("", ServingStatus::Serving)
                .await;
        })
    };
    let verifier = Arc::new(IdentityVerifier::new(settings.identity.clone()));
    let addr = listener.local_addr()?;
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    tracing::info!(service = settings.name, %addr, "grpc service listening");

    // Shutdown: NOT_SERVING at once (after a readiness still on its way
    // is stopped or landed), then the shared drain sequence.
    let not_ready = async move {
        becoming_ready.abort();
        let _ = becoming_ready.await;
        reporter
            .set_service_status(S::NAME, ServingStatus::NotServing)
            .await;
        reporter
            .set_service_status("", ServingStatus::NotServing)
            .await;
    };
    let times = DrainTimes {
        delay: settings.program.shutdown_delay,
        timeout: settings.program.drain_timeout,
    };
    let reflection = match settings.reflection {
        Reflection::Off => None,
        _ => Some(
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(storefront_proto::FILE_DESCRIPTOR_SET)
                .build_v1()?,
        ),
    };
    let open_reflection = settings.reflection == Reflection::Open;
    let drained = drain(shutdown, times, not_ready, |stop_accepting| {
        Server::builder()
            // A backstop to client-side balancing: a client that only
            // knows one replica reconnects, through its Service, in time.
            // No grace: with tonic 0.14 setting one skips the graceful
            // shutdown at the age (GOAWAY, calls in flight finish) and
            // cuts the connection at age + grace instead, failing what
            // it carries. Every call has a deadline, so a graceful close
            // ends; a whole feed streamed in finishes on its connection.
            .max_connection_age(settings.max_connection_age)
            .initial_stream_window_size(crate::client::STREAM_WINDOW)
            .initial_connection_window_size(crate::client::CONNECTION_WINDOW)
            .max_frame_size(crate::client::MAX_FRAME)
            .layer(GrpcMetricsLayer)
            .layer(grpc_trace_layer())
            .layer(CallContextLayer)
            .layer(IdentityLayer::new(verifier).with_open_reflection(open_reflection))
            .add_service(health)
            .add_optional_service(reflection)
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, stop_accepting.cancelled_owned())
    })
    .await?;
    if !drained {
        tracing::warn!(
            service = settings.name,
            "drain timeout reached, dropping in-flight calls"
        );
    }
    tracing::info!(service = settings.name, "grpc service stopped");
    Ok(())
}

/// NOT_SERVING (the service and `""`, what readiness asks) once `refusals`
/// says why, for good: the process is restarted rather than put back.
async fn refuse_when_told<S: NamedService>(
    reporter: tonic_health::server::HealthReporter,
    mut refusals: tokio::sync::watch::Receiver<Option<String>>,
) {
    let why = match refusals.wait_for(Option::is_some).await {
        Ok(why) => why.clone().unwrap_or_default(),
        Err(_) => return,
    };
    tracing::error!(service = S::NAME, reason = %why, "not serving");
    for name in [S::NAME, ""] {
        reporter
            .set_service_status(name, ServingStatus::NotServing)
            .await;
    }
}
