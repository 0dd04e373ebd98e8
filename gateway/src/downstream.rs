//! The gRPC side of the gateway: channels to each service, and the request
//! decoration every call gets (identity token, correlation id, deadline).

use std::sync::Arc;
use std::time::Duration;

use storefront_common::identity::token_source::TokenSource;
use storefront_common::telemetry::CORRELATION_ID_HEADER;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::customers::v1::customer_service_client::CustomerServiceClient;
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::config::{DownstreamConfig, GatewayConfig};
use crate::error::ApiError;
use crate::middleware::correlation::CorrelationId;

/// Health checks answer quickly or count as not serving.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct Downstream {
    /// The name readiness reports, e.g. `catalog`.
    pub name: &'static str,
    /// The gRPC service name health is asked about.
    pub grpc_service: &'static str,
    pub audience: String,
    pub channel: Channel,
}

impl Downstream {
    fn new(
        name: &'static str,
        grpc_service: &'static str,
        config: &DownstreamConfig,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let channel = Endpoint::from_shared(config.url.clone())?
            .connect_timeout(Duration::from_secs(1))
            .timeout(timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .connect_lazy();
        Ok(Self {
            name,
            grpc_service,
            audience: config.audience.clone(),
            channel,
        })
    }

    /// Whether the service reports SERVING within [`HEALTH_TIMEOUT`].
    pub async fn serving(&self) -> bool {
        let mut client = HealthClient::new(self.channel.clone());
        let mut request = tonic::Request::new(HealthCheckRequest {
            service: self.grpc_service.to_string(),
        });
        request.set_timeout(HEALTH_TIMEOUT);
        let check = tokio::time::timeout(HEALTH_TIMEOUT, client.check(request)).await;
        matches!(check, Ok(Ok(r)) if r.get_ref().status() == ServingStatus::Serving)
    }
}

#[derive(Clone)]
pub struct Downstreams {
    pub catalog: Downstream,
    pub customers: Downstream,
    tokens: Arc<TokenSource>,
    timeout: Duration,
}

impl Downstreams {
    pub fn new(config: &GatewayConfig) -> anyhow::Result<Self> {
        let timeout = config.grpc_timeout;
        Ok(Self {
            catalog: Downstream::new(
                "catalog",
                "storefront.catalog.v1.CatalogService",
                &config.catalog,
                timeout,
            )?,
            customers: Downstream::new(
                "customers",
                "storefront.customers.v1.CustomerService",
                &config.customers,
                timeout,
            )?,
            tokens: Arc::new(TokenSource::new(config.identity_token_url.clone())),
            timeout,
        })
    }

    pub fn all(&self) -> [&Downstream; 2] {
        [&self.catalog, &self.customers]
    }

    pub fn customers(&self) -> CustomerServiceClient<Channel> {
        CustomerServiceClient::new(self.customers.channel.clone())
    }

    pub fn catalog(&self) -> CatalogServiceClient<Channel> {
        CatalogServiceClient::new(self.catalog.channel.clone())
    }

    /// Wraps `message` for a call to `to`: identity token, correlation id and
    /// deadline.
    pub async fn request<T>(
        &self,
        to: &Downstream,
        correlation: &CorrelationId,
        message: T,
    ) -> Result<tonic::Request<T>, ApiError> {
        let bearer = self
            .tokens
            .bearer(&to.audience)
            .await
            .map_err(|e| ApiError::unavailable(to.name, e))?;
        let mut request = tonic::Request::new(message);
        request.set_timeout(self.timeout);
        let metadata = request.metadata_mut();
        metadata.insert("authorization", bearer);
        if let Ok(id) = MetadataValue::try_from(correlation.0.as_bytes()) {
            metadata.insert(CORRELATION_ID_HEADER, id);
        }
        Ok(request)
    }
}
