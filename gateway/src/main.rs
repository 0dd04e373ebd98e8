#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("gateway", storefront_gateway::run).await
}
