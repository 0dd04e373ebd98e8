//! The gRPC side of the gateway: one [`Caller`] per domain service (its
//! channel, identity token, breaker and the shared retry budget) and its
//! health; the calls themselves go through the typed clients of
//! [`clients`].

mod call;
pub use call::CallContext;
pub mod clients;
pub mod summaries;

use std::sync::Arc;
use std::time::Duration;

use storefront_platform::client::Peer;
use storefront_platform::client::breaker::Breaker;
use storefront_platform::client::call::{Caller, retry_budget};
use storefront_platform::identity::token_source::TokenSource;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

pub use clients::Downstreams;

use crate::config::DownstreamSettings;

/// Health checks answer quickly or count as not serving.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a health answer is reused: a flood of readiness probes costs
/// each downstream at most one check a second while it serves, ten while it
/// does not (so that readiness follows a service coming up within 100 ms).
const HEALTH_CACHE: Duration = Duration::from_secs(1);
const UNHEALTHY_CACHE: Duration = Duration::from_millis(100);

#[derive(Clone)]
pub struct Downstream {
    pub caller: Caller,
    /// The gRPC service name health is asked about.
    pub grpc_service: &'static str,
    /// The last health answer and when it came; the lock also makes
    /// concurrent probes share one check.
    health: Arc<tokio::sync::Mutex<Option<(std::time::Instant, bool)>>>,
}

impl Downstream {
    pub fn name(&self) -> &'static str {
        self.caller.name()
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
        let mut client = HealthClient::new(self.caller.peer.unguarded.clone());
        let mut request = tonic::Request::new(HealthCheckRequest {
            service: self.grpc_service.to_string(),
        });
        request.set_timeout(HEALTH_TIMEOUT);
        let check = tokio::time::timeout(HEALTH_TIMEOUT, client.check(request)).await;
        matches!(check, Ok(Ok(r)) if r.get_ref().status() == ServingStatus::Serving)
    }
}

impl Downstream {
    /// Makes a downstream from its gRPC service name and its program's
    /// name: its configured address and audience, the gateway's identity
    /// tokens, deadline, concurrency and breaker settings, and one retry
    /// budget shared by all of them (retries add at most 20% to all the
    /// gateway's calls).
    fn maker(
        config: &DownstreamSettings,
    ) -> impl Fn(&'static str, &str) -> anyhow::Result<Downstream> + '_ {
        let tokens = Arc::new(TokenSource::new(config.identity_tokens.clone()));
        let budget = retry_budget();
        move |grpc_service, name| {
            let c = config
                .peer(name)
                .ok_or_else(|| anyhow::anyhow!("no configuration for the downstream {name}"))?;
            let peer = Peer::limited(
                c.name,
                &c.url,
                &c.audience,
                tokens.clone(),
                config.grpc_timeout,
                config.concurrency,
            )?;
            let breaker = Arc::new(Breaker::new(
                config.breaker_threshold,
                config.breaker_open_for,
            ));
            Ok(Downstream {
                caller: Caller {
                    peer,
                    breaker,
                    retry_budget: budget.clone(),
                },
                grpc_service,
                health: Arc::default(),
            })
        }
    }
}
