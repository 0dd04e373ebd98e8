use storefront_common::config::EnvReader;
use storefront_common::{shutdown, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init_tracing();
    let config = storefront_content::ContentConfig::from_env(&EnvReader::from_process())?;
    let listener = tokio::net::TcpListener::bind(config.service.listen_addr).await?;
    storefront_content::serve(config, listener, shutdown::on_signal()).await
}
