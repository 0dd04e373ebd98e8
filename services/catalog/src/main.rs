#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("catalog", storefront_catalog::run).await
}
