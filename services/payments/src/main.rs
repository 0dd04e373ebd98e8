#[tokio::main]
async fn main() -> anyhow::Result<()> {
    storefront_platform::service::main::<storefront_payments::Payments>().await
}
