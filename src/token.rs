//! `storefront token [ACCOUNT] [AUDIENCE]`: a dev identity token from the
//! dev issuer of a mesh running locally (`cargo run`), by default for the
//! ops account and the internal port's audience, so that the README's
//! internal-API recipes work as pasted. Local and development only.

use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer::account_url;
use storefront_platform::topology;

const DEFAULT_ACCOUNT: &str = "ops@storefront.iam.gserviceaccount.com";
const DEFAULT_AUDIENCE: &str = "gateway-internal";

/// Prints the token.
pub async fn token(args: &[String]) -> anyhow::Result<()> {
    let env = EnvReader::from_process();
    if env.environment()?.refuses_dev_shortcuts() {
        anyhow::bail!("APP_ENV=production or staging: there is no dev issuer to ask");
    }
    let account = args.first().map_or(DEFAULT_ACCOUNT, String::as_str);
    let audience = args.get(1).map_or(DEFAULT_AUDIENCE, String::as_str);
    let issuer = env.string("DEV_ISSUER_URL", &topology::DEV_ISSUER.local_url());
    let reply = reqwest::Client::new()
        .get(account_url(&issuer, account))
        .query(&[("audience", audience)])
        .header("Metadata-Flavor", "Google")
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| {
            anyhow::anyhow!(
                "no dev issuer at {issuer} (is `cargo run` running?): {}",
                e.without_url()
            )
        })?;
    println!("{}", reply.text().await?);
    Ok(())
}
