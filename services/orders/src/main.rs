#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("orders", storefront_orders::run).await
}
