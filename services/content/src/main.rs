#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_common::process::run("content", storefront_content::run).await
}
