//! The gRPC side of the gateway: one [`Peer`] per domain service (channel,
//! identity token, correlation id, deadline) and its health.

use std::sync::Arc;
use std::time::Duration;

use storefront_common::client::{Guarded, Peer, is_shed};
use storefront_common::identity::token_source::TokenSource;
use storefront_proto::cart::v1::cart_service_client::CartServiceClient;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::content::v1::content_service_client::ContentServiceClient;
use storefront_proto::customers::v1::customer_service_client::CustomerServiceClient;
use storefront_proto::orders::v1::order_service_client::OrderServiceClient;
use storefront_proto::search::v1::search_service_client::SearchServiceClient;
use tonic::metadata::MetadataValue;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tower::retry::budget::{Budget, TpsBudget};

use crate::breaker::Breaker;
use crate::config::{DownstreamConfig, GatewayConfig};
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;

/// Health checks answer quickly or count as not serving.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a health answer is reused: a flood of readiness probes costs
/// each downstream at most one check a second while it serves, ten while it
/// does not (so that readiness follows a service coming up within 100 ms).
const HEALTH_CACHE: Duration = Duration::from_secs(1);
const UNHEALTHY_CACHE: Duration = Duration::from_millis(100);

#[derive(Clone)]
pub struct Downstream {
    pub peer: Peer,
    /// The gRPC service name health is asked about.
    pub grpc_service: &'static str,
    pub breaker: Arc<Breaker>,
    /// The last health answer and when it came; the lock also makes
    /// concurrent probes share one check.
    health: Arc<tokio::sync::Mutex<Option<(std::time::Instant, bool)>>>,
}

impl Downstream {
    pub fn name(&self) -> &'static str {
        self.peer.name
    }

    /// Whether the service reports SERVING within [`HEALTH_TIMEOUT`], as
    /// checked at most [`HEALTH_CACHE`] (or, not serving,
    /// [`UNHEALTHY_CACHE`]) ago.
    pub async fn serving(&self) -> bool {
        let mut last = self.health.lock().await;
        if let Some((at, ok)) = *last
            && at.elapsed() < if ok { HEALTH_CACHE } else { UNHEALTHY_CACHE }
        {
            return ok;
        }
        let ok = self.check().await;
        *last = Some((std::time::Instant::now(), ok));
        ok
    }

    async fn check(&self) -> bool {
        let mut client = HealthClient::new(self.peer.unguarded.clone());
        let mut request = tonic::Request::new(HealthCheckRequest {
            service: self.grpc_service.to_string(),
        });
        request.set_timeout(HEALTH_TIMEOUT);
        let check = tokio::time::timeout(HEALTH_TIMEOUT, client.check(request)).await;
        matches!(check, Ok(Ok(r)) if r.get_ref().status() == ServingStatus::Serving)
    }
}

/// Retries of an idempotent read after a downstream was unreachable.
const MAX_RETRIES: u32 = 3;
/// The first back-off; it doubles, with up to ±50% jitter.
const BASE_BACKOFF: Duration = Duration::from_millis(50);

fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF * 2u32.pow(attempt);
    base.mul_f64(0.5 + fastrand::f64())
}

#[derive(Clone)]
pub struct Downstreams {
    /// Retries may add at most 20% to the calls made (plus a floor of 10 a
    /// second), so a struggling downstream is not buried under retries.
    retry_budget: Arc<TpsBudget>,
    pub catalog: Downstream,
    pub customers: Downstream,
    pub cart: Downstream,
    pub orders: Downstream,
    pub search: Downstream,
    pub content: Downstream,
}

impl Downstreams {
    pub fn new(config: &GatewayConfig) -> anyhow::Result<Self> {
        let tokens = Arc::new(TokenSource::new(config.identity_token_url.clone()));
        let timeout = config.grpc_timeout;
        let downstream = |name: &'static str, grpc_service: &'static str, c: &DownstreamConfig| {
            let peer = Peer::limited(
                name,
                &c.url,
                &c.audience,
                tokens.clone(),
                timeout,
                config.downstream_concurrency,
            )?;
            let breaker = Arc::new(Breaker::new(
                config.breaker_threshold,
                config.breaker_open_for,
            ));
            Ok::<_, anyhow::Error>(Downstream {
                peer,
                grpc_service,
                breaker,
                health: Arc::default(),
            })
        };
        Ok(Self {
            retry_budget: Arc::new(TpsBudget::new(Duration::from_secs(10), 10, 0.2)),
            catalog: downstream(
                "catalog",
                "storefront.catalog.v1.CatalogService",
                &config.catalog,
            )?,
            customers: downstream(
                "customers",
                "storefront.customers.v1.CustomerService",
                &config.customers,
            )?,
            cart: downstream("cart", "storefront.cart.v1.CartService", &config.cart)?,
            orders: downstream(
                "orders",
                "storefront.orders.v1.OrderService",
                &config.orders,
            )?,
            search: downstream(
                "search",
                "storefront.search.v1.SearchService",
                &config.search,
            )?,
            content: downstream(
                "content",
                "storefront.content.v1.ContentService",
                &config.content,
            )?,
        })
    }

    pub fn all(&self) -> [&Downstream; 6] {
        [
            &self.catalog,
            &self.customers,
            &self.cart,
            &self.orders,
            &self.search,
            &self.content,
        ]
    }

    pub fn content(&self) -> ContentServiceClient<Guarded> {
        ContentServiceClient::new(self.content.peer.channel.clone())
    }

    pub fn search(&self) -> SearchServiceClient<Guarded> {
        SearchServiceClient::new(self.search.peer.channel.clone())
    }

    pub fn catalog(&self) -> CatalogServiceClient<Guarded> {
        CatalogServiceClient::new(self.catalog.peer.channel.clone())
    }

    pub fn customers(&self) -> CustomerServiceClient<Guarded> {
        CustomerServiceClient::new(self.customers.peer.channel.clone())
    }

    pub fn cart(&self) -> CartServiceClient<Guarded> {
        CartServiceClient::new(self.cart.peer.channel.clone())
    }

    pub fn orders(&self) -> OrderServiceClient<Guarded> {
        OrderServiceClient::new(self.orders.peer.channel.clone())
    }

    /// An idempotent read: `call` is retried with jittered exponential
    /// back-off while `to` is unreachable, within the retry budget. Other
    /// failures (a deadline included) are answered at once.
    pub async fn read<M, R, F, Fut>(
        &self,
        to: &Downstream,
        correlation: &CallContext,
        message: M,
        call: F,
    ) -> Result<R, ApiError>
    where
        M: Clone,
        F: Fn(tonic::Request<M>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        self.retry_budget.deposit();
        let mut attempt = 0;
        let outcome = loop {
            let request = self.request(to, correlation, message.clone()).await?;
            // A route with its own deadline holds reads to it, even against
            // a downstream that never answers.
            let result = match correlation.deadline {
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
                        && attempt < MAX_RETRIES
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
        // The breaker counts reads, not attempts: one read that exhausted its
        // retries is one failure. Only the downstream failing counts: a
        // deadline may be one expensive request's own (heavy queries must
        // not open the circuit for everyone), and a shed call was never
        // sent; the concurrency limit bounds what a hung downstream holds.
        match &outcome {
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
        Ok(outcome?.into_inner())
    }

    /// Wraps `message` for a call to `to`; refused at once (503
    /// `CIRCUIT_OPEN`) while `to`'s circuit is open.
    pub async fn request<T>(
        &self,
        to: &Downstream,
        correlation: &CallContext,
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
        let id = MetadataValue::try_from(correlation.correlation_id.as_bytes()).ok();
        let mut request = to
            .peer
            .request(id.as_ref(), message)
            .await
            .map_err(|e| ApiError::unavailable(to.name(), e))?;
        // The route's own deadline travels as grpc-timeout (the channel's is the cap).
        if let Some(deadline) = correlation.deadline {
            request.set_timeout(deadline);
        }
        Ok(request)
    }
}
