use storefront_common::config::EnvReader;
use storefront_common::store::Store;
use storefront_common::{shutdown, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init_tracing();
    let config = storefront_cart::CartConfig::from_env(&EnvReader::from_process())?;
    let store = Store::open(config.redis_url.as_deref(), "sf:").await?;
    let listener = tokio::net::TcpListener::bind(config.service.listen_addr).await?;
    storefront_cart::serve(config, store, listener, shutdown::on_signal()).await
}
