#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::process::run("content", storefront_content::run).await
}
