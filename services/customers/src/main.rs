use storefront_common::config::{AppEnvironment, EnvReader};
use storefront_common::store::Store;
use storefront_common::{shutdown, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init_tracing();
    let config = storefront_customers::CustomersConfig::from_env(&EnvReader::from_process())?;
    let store = Store::open(config.redis_url.as_deref(), "sf:").await?;
    let seed = config.service.environment == AppEnvironment::Local;
    let listener = tokio::net::TcpListener::bind(config.service.listen_addr).await?;
    storefront_customers::serve(config, store, seed, listener, shutdown::on_signal()).await
}
