//! The customers service: accounts and sessions (argon2id passwords, ES256
//! access tokens, rotating refresh tokens), profile, addresses, preferences.

mod accounts;
mod captcha;
pub mod config;
pub mod mail;
mod model;
mod password;
mod profile;
mod service;
mod sessions;
mod tokens;
mod validate;

use std::sync::Arc;

use storefront_platform::env::AppEnvironment;
use storefront_platform::store::Store;
use storefront_proto::customers::v1::customer_service_server::CustomerServiceServer;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use crate::config::CustomersConfig;

/// The demo accounts the local environment is seeded with (README).
pub const DEMO_CUSTOMERS: &[(&str, &str, &str, &str)] = &[
    ("ava@example.com", "storefront-demo-1", "Ava", "Nguyen"),
    ("liam@example.com", "storefront-demo-2", "Liam", "Walker"),
];

fn api(config: &CustomersConfig, store: Store) -> anyhow::Result<service::CustomersApi> {
    let accounts = accounts::Accounts {
        store: store.clone(),
        hasher: password::Hasher::new(config.argon2)?,
        signer: Arc::new(tokens::Signer::new(&config.tokens)?),
        captcha: captcha::Captcha::new(config.captcha.clone()),
        refresh_ttl: config.tokens.refresh_ttl,
        max_sessions: config.max_sessions,
        outbox: mail::Outbox::start(Arc::new(mail::LogMailer)),
    };
    Ok(service::CustomersApi {
        accounts: Arc::new(accounts),
        profiles: Arc::new(profile::Profiles {
            store,
            max_addresses: config.max_addresses,
        }),
    })
}

/// Runs the customers service as its own program, configured by `env`, until
/// `shutdown`.
pub async fn run(
    env: storefront_platform::env::EnvReader,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let config = CustomersConfig::from_env(&env)?;
    let store = Store::open(config.redis_url.as_deref(), "sf:").await?;
    // Demo customers exist only where the README promises them: locally.
    let seed = config.service.program.environment == AppEnvironment::Local;
    let listener = TcpListener::bind(config.service.program.listen_addr).await?;
    serve(config, store, seed, listener, shutdown).await
}

/// Serves the customers service on `listener` until `shutdown`; with
/// `seed_demo` the demo customers are created first (local only).
pub async fn serve(
    config: CustomersConfig,
    store: Store,
    seed_demo: bool,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let api = api(&config, store)?;
    if seed_demo {
        anyhow::ensure!(
            !config.service.program.environment.refuses_dev_shortcuts(),
            "demo customers are never seeded in production or staging"
        );
        seed(&api).await?;
    }
    storefront_platform::server::serve_grpc(
        &config.service,
        CustomerServiceServer::new(api),
        listener,
        shutdown,
    )
    .await
}

async fn seed(api: &service::CustomersApi) -> anyhow::Result<()> {
    for (email, password, first, last) in DEMO_CUSTOMERS {
        let created = api.accounts.create(
            email.to_string(),
            password.to_string(),
            first.to_string(),
            last.to_string(),
        );
        // Seeded before: kept as it is.
        if let Err(e) = created.await {
            anyhow::bail!("seeding {email}: {e}");
        }
    }
    Ok(())
}
