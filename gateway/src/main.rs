use storefront_common::config::EnvReader;
use storefront_common::{shutdown, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init_tracing();
    let config = storefront_gateway::GatewayConfig::from_env(&EnvReader::from_process())?;
    let store = storefront_common::store::Store::open(config.redis_url.as_deref(), "sf:").await?;
    let listener = tokio::net::TcpListener::bind(config.listen_addr).await?;
    let internal = tokio::net::TcpListener::bind(config.internal_addr).await?;
    storefront_gateway::serve(config, store, listener, internal, shutdown::on_signal()).await
}
