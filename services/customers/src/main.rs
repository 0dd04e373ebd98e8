#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("customers", storefront_customers::run).await
}
