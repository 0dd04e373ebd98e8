#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("gateway", storefront_gateway::run).await
}
