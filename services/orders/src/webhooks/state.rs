//! Each endpoint's deliveries, counted in the shared store so that every
//! replica's add up, for `GET /internal/webhooks`.

use storefront_platform::error::ServiceError;
use storefront_platform::store::{Store, Updated};
use storefront_proto::Timestamp;
use storefront_proto::orders::v1::{ListWebhookDeliveriesResponse, WebhookDelivery};

use super::shown;

const ATTEMPTS: usize = 64;

fn key(url: &str) -> String {
    format!("webhook-state:{url}")
}

/// Changes the state of the endpoint shown as `url`. A failure is logged:
/// the counts are for people, the deliveries go on.
pub async fn record(store: &Store, url: &str, change: impl Fn(&mut WebhookDelivery)) {
    let key = key(url);
    let updated = store
        .update_message(&key, ATTEMPTS, None, |state: &mut WebhookDelivery| {
            change(state);
            Ok::<_, ServiceError>(())
        })
        .await;
    let result = match updated {
        Ok(Updated::Missing) => {
            let mut state = WebhookDelivery {
                url: url.to_string(),
                ..Default::default()
            };
            change(&mut state);
            store
                .insert_message(&key, &state, None)
                .await
                .map(drop)
                .map_err(ServiceError::from)
        }
        Ok(_) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        tracing::warn!(error = %e, url, "a webhook delivery was not counted");
    }
}

pub fn now() -> Option<Timestamp> {
    Some(Timestamp::from(std::time::SystemTime::now()))
}

/// Every configured endpoint's state (zeros for one that has seen none).
pub async fn list(
    store: &Store,
    endpoints: &[reqwest::Url],
) -> Result<ListWebhookDeliveriesResponse, ServiceError> {
    let mut states = Vec::with_capacity(endpoints.len());
    for url in endpoints {
        let url = shown(url);
        let state = store.get_message::<WebhookDelivery>(&key(&url)).await?;
        states.push(state.map(|s| s.value).unwrap_or(WebhookDelivery {
            url,
            ..Default::default()
        }));
    }
    Ok(ListWebhookDeliveriesResponse { endpoints: states })
}
