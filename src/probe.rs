//! `storefront probe <target>`: exits 0 when the target is healthy. The
//! runtime image has no shell and no curl, so container health checks call
//! the binary itself: `http(s)://...` must answer 2xx, `grpc://host:port`
//! must report SERVING on `grpc.health.v1`.

use std::time::Duration;

use anyhow::Context;
use tonic::transport::Endpoint;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

const TIMEOUT: Duration = Duration::from_secs(2);

pub async fn probe(target: &str) -> anyhow::Result<()> {
    if let Some(addr) = target.strip_prefix("grpc://") {
        let channel = Endpoint::from_shared(format!("http://{addr}"))?
            .connect_timeout(TIMEOUT)
            .timeout(TIMEOUT)
            .connect()
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        let reply = HealthClient::new(channel)
            .check(HealthCheckRequest::default())
            .await?
            .into_inner();
        anyhow::ensure!(
            reply.status == ServingStatus::Serving as i32,
            "{addr} is not serving"
        );
        return Ok(());
    }
    let status = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .build()?
        .get(target)
        .send()
        .await
        .with_context(|| format!("requesting {target}"))?
        .status();
    anyhow::ensure!(status.is_success(), "{target} answered {status}");
    Ok(())
}
