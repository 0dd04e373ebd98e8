#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("cart", storefront_cart::run).await
}
