//! `cargo run --release`: the whole mesh on the embedded defaults.

use storefront::Mesh;
use storefront_common::config::EnvReader;
use storefront_common::{shutdown, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    telemetry::init_tracing();
    let mesh = Mesh::start(EnvReader::from_process(), None).await?;
    tracing::info!(url = %format!("http://{}", mesh.gateway_addr), "storefront mesh ready");
    mesh.run_until(shutdown::on_signal()).await
}
