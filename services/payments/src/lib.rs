//! The payments service (issue 47): taking money at checkout, provider by
//! provider, behind one trait: a payment is created for an amount and a
//! currency under an idempotency key, confirmed with a payment method,
//! read, captured, voided and refunded; a provider's webhooks are verified
//! and parsed. It is the only program holding provider secrets.
//!
//! Providers: `test` (the embedded default, in memory, mirroring Stripe's
//! test payment methods so client code is the same; refused in production
//! and staging) and `stripe` (PaymentIntents with manual capture).

pub mod config;
mod deliver;
pub mod error;
pub mod payment;
pub mod provider;
pub mod service;
pub mod stripe;
#[cfg(test)]
mod stripe_tests;
pub mod test_provider;
pub mod webhook;

use std::sync::Arc;

use storefront_platform::secret_files::{self, Followed};
use storefront_platform::service::Serving;
use storefront_platform::topology;
use storefront_proto::payments::v1::payment_service_server::PaymentServiceServer;

pub use crate::config::{PaymentsConfig, ProviderConfig};
pub use error::PaymentError;
pub use payment::{Money, NextAction, Payment, PaymentStatus};
pub use provider::PaymentProvider;

storefront_platform::service! {
    /// The payments service as the mesh runs it.
    Payments: topology::PAYMENTS, PaymentsConfig, serve
}

pub async fn serve(config: PaymentsConfig, serving: Serving) -> anyhow::Result<()> {
    let Serving {
        listener,
        store: _,
        shutdown,
    } = serving;
    let api = match &config.provider {
        ProviderConfig::Test {
            webhook_secret,
            deliver_to,
        } => {
            let test = Arc::new(test_provider::TestProvider::new(webhook_secret.expose()));
            match deliver_to {
                Some(url) => {
                    tokio::spawn(deliver::run(test.clone(), url.clone(), shutdown.clone()));
                }
                // Nowhere to post them: kept would grow without end.
                None => {
                    let test = test.clone();
                    let stop = shutdown.clone();
                    tokio::spawn(async move {
                        while !stop.is_cancelled() {
                            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                            drop(test.deliveries());
                        }
                    });
                }
            }
            service::PaymentsApi {
                provider: test.clone(),
                test: Some(test),
            }
        }
        ProviderConfig::Stripe {
            api_base,
            secret_key,
            webhook_secret,
        } => {
            let stripe =
                stripe::StripeProvider::new(api_base, secret_key.expose(), webhook_secret.expose());
            // A rolled key (Stripe lets both work for a while) or a new
            // endpoint secret is used from the next call on.
            let followed = [
                ("STRIPE_SECRET_KEY", secret_key, stripe.secret_key.clone()),
                (
                    "STRIPE_WEBHOOK_SECRET",
                    webhook_secret,
                    stripe.webhook_secret.clone(),
                ),
            ]
            .into_iter()
            .filter_map(|(name, source, swap)| {
                let take = move |text: &str| {
                    swap.set(text.to_string());
                    Ok(())
                };
                Followed::of(name, source, Box::new(take))
            })
            .collect();
            let every = config.service.program.secrets_watch;
            secret_files::watch(followed, every, shutdown.clone());
            service::PaymentsApi {
                provider: Arc::new(stripe),
                test: None,
            }
        }
    };
    tracing::info!(provider = api.provider.name(), "payments ready");
    storefront_platform::server::serve_grpc(
        &config.service,
        PaymentServiceServer::new(api),
        listener,
        shutdown,
    )
    .await
}
