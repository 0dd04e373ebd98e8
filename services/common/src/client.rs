//! Calling another service of the mesh: a lazily connected channel, and the
//! decoration every call carries (identity token for the callee's audience,
//! correlation id, deadline).

use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Channel, Endpoint};

use crate::identity::token_source::{TokenError, TokenSource};
use crate::telemetry::{CORRELATION_ID_HEADER, inject_current_trace};

#[derive(Clone)]
pub struct Peer {
    /// The name errors and readiness use, e.g. `catalog`.
    pub name: &'static str,
    pub audience: String,
    pub channel: Channel,
    tokens: Arc<TokenSource>,
    timeout: Duration,
}

impl Peer {
    pub fn new(
        name: &'static str,
        url: &str,
        audience: &str,
        tokens: Arc<TokenSource>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let channel = Endpoint::from_shared(url.to_string())?
            .connect_timeout(Duration::from_secs(1))
            .timeout(timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(30))
            .connect_lazy();
        Ok(Self {
            name,
            audience: audience.to_string(),
            channel,
            tokens,
            timeout,
        })
    }

    /// `message` with this peer's identity token, the correlation id (if
    /// any), the current trace context and the call deadline.
    pub async fn request<T>(
        &self,
        correlation: Option<&MetadataValue<Ascii>>,
        message: T,
    ) -> Result<tonic::Request<T>, TokenError> {
        let bearer = self.tokens.bearer(&self.audience).await?;
        let mut request = tonic::Request::new(message);
        request.set_timeout(self.timeout);
        let metadata = request.metadata_mut();
        metadata.insert("authorization", bearer);
        if let Some(id) = correlation {
            metadata.insert(CORRELATION_ID_HEADER, id.clone());
        }
        inject_current_trace(metadata);
        Ok(request)
    }
}

/// The correlation id a gRPC request arrived with, to pass along.
pub fn correlation_of<T>(request: &tonic::Request<T>) -> Option<MetadataValue<Ascii>> {
    request.metadata().get(CORRELATION_ID_HEADER).cloned()
}
