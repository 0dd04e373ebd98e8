//! The customers service: accounts and sessions (argon2id passwords, ES256
//! access tokens, rotating refresh tokens), profile, addresses, preferences.

mod accounts;
mod captcha;
pub mod config;
mod guests;
pub mod mail;
mod model;
mod password;
mod profile;
mod service;
mod sessions;
mod tokens;
mod validate;

use std::sync::Arc;

use storefront_domain::currencies::Currencies;
use storefront_domain::markets::MarketSet;
use storefront_platform::env::AppEnvironment;
use storefront_platform::service::Serving;
use storefront_platform::shared_document::MARKETS;
use storefront_platform::store::Store;
use storefront_platform::topology;
use storefront_proto::customers::v1::customer_service_server::CustomerServiceServer;

pub use crate::config::CustomersConfig;

/// The demo accounts the local environment is seeded with (README).
pub const DEMO_CUSTOMERS: &[(&str, &str, &str, &str)] = &[
    ("ava@example.com", "storefront-demo-1", "Ava", "Nguyen"),
    ("liam@example.com", "storefront-demo-2", "Liam", "Walker"),
];

fn api(config: &CustomersConfig, store: Store) -> anyhow::Result<service::CustomersApi> {
    let accounts = accounts::Accounts {
        store: store.clone(),
        hasher: password::Hasher::new(config.argon2, config.hashing)?,
        signer: Arc::new(tokens::Signer::new(&config.tokens)?),
        captcha: captcha::Captcha::new(config.captcha.clone()),
        refresh_ttl: config.tokens.refresh_ttl,
        max_sessions: config.max_sessions,
        outbox: mail::Outbox::start(Arc::new(mail::LogMailer)),
        default_currency: config.currencies.default_code().to_string(),
    };
    Ok(service::CustomersApi {
        accounts: Arc::new(accounts),
        profiles: Arc::new(profile::Profiles {
            store,
            max_addresses: config.max_addresses,
            currencies: Arc::new(std::sync::RwLock::new(config.currencies.clone())),
        }),
    })
}

storefront_platform::service! {
    /// The customers service as the mesh runs it.
    Customers: topology::CUSTOMERS, CustomersConfig, serve, state in redis
}

/// Serves the customers service until shutdown; locally (only) the demo
/// customers are created first.
pub async fn serve(config: CustomersConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store,
        shutdown,
    } = serving;
    let refusals = store.refusals();
    let api = api(&config, store.clone())?;
    let accounts = &api.accounts;
    let mut followed = accounts.signer.follow(&config.tokens);
    followed.extend(accounts.captcha.follow());
    let every = config.service.program.secrets_watch;
    storefront_platform::secret_files::watch(followed, every, shutdown.clone());
    tokio::spawn(follow_currencies(
        api.profiles.currencies.clone(),
        store,
        shutdown.clone(),
    ));
    // Demo customers exist only where the README promises them: locally.
    if config.service.program.environment == AppEnvironment::Local {
        anyhow::ensure!(
            !config.service.program.environment.refuses_dev_shortcuts(),
            "demo customers are never seeded in production or staging"
        );
        seed(&api).await?;
    }
    storefront_platform::server::serve_grpc_on(
        &config.service,
        CustomerServiceServer::new(api),
        listener,
        shutdown,
        refusals,
    )
    .await
}

/// A currency the shop's markets add while it runs becomes one a
/// preference may name (docs/markets.md, "Currencies").
async fn follow_currencies(
    currencies: Arc<std::sync::RwLock<Arc<Currencies>>>,
    store: Store,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let take = move |_version, set: MarketSet| {
        let mut held = currencies.write().unwrap_or_else(|p| p.into_inner());
        if let Some(wider) = held.extended(&set) {
            *held = Arc::new(wider);
        }
    };
    MARKETS
        .follow(store, 0, storefront_domain::markets::parse, take, shutdown)
        .await;
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
