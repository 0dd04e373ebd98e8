#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("search", storefront_search::run).await
}
