#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("customers", storefront_customers::run).await
}
