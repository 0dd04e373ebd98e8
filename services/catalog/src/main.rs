#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("catalog", storefront_catalog::run).await
}
