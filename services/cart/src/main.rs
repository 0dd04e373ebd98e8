#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("cart", storefront_cart::run).await
}
