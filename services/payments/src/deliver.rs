//! The test provider's webhooks, posted as Stripe posts its own: the
//! signed body to the storefront's `/webhooks/payments/test`, with the
//! `Stripe-Signature` header, several at once (as Stripe does), retried a
//! few times when refused.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::test_provider::{Delivery, TestProvider};

/// How often new deliveries are looked for: a webhook is meant to come
/// after the answer, as Stripe's does.
const TICK: Duration = Duration::from_millis(100);
/// Tries per delivery before it is dropped (logged).
const ATTEMPTS: u32 = 5;
/// Deliveries posted at once.
const IN_FLIGHT: usize = 16;

/// Posts `provider`'s deliveries to `url` until `shutdown`.
pub async fn run(provider: Arc<TestProvider>, url: String, shutdown: CancellationToken) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap_or_default();
    let mut pending: Vec<(Delivery, u32)> = Vec::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(TICK) => {}
        }
        pending.extend(provider.deliveries().into_iter().map(|d| (d, 0)));
        let sends = pending.drain(..).map(|(delivery, tries)| {
            let http = &http;
            let url = &url;
            async move {
                let (signature, body) = &delivery;
                let sent = http
                    .post(url)
                    .header("Stripe-Signature", signature)
                    .header("Content-Type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                match sent {
                    Ok(r) if r.status().is_success() => None,
                    Ok(r) => Some((delivery, tries + 1, r.status().as_u16())),
                    Err(_) => Some((delivery, tries + 1, 0)),
                }
            }
        });
        let failed: Vec<_> = futures::stream::iter(sends)
            .buffer_unordered(IN_FLIGHT)
            .collect()
            .await;
        for (delivery, tries, status) in failed.into_iter().flatten() {
            if tries < ATTEMPTS {
                pending.push((delivery, tries));
            } else {
                tracing::warn!(status, "a test payment webhook was not taken; dropped");
            }
        }
    }
}
