#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("search", storefront_search::run).await
}
