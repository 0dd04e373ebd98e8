#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("orders", storefront_orders::run).await
}
