//! Where delivering order events to each webhook stands.

use serde::Serialize;
use storefront_proto::orders::v1 as pb;
use utoipa::ToSchema;

use super::common::timestamp;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveries {
    /// Each configured endpoint (`ORDER_WEBHOOK_URLS`), in its order.
    pub endpoints: Vec<WebhookDelivery>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// The endpoint without its query or credentials.
    pub url: String,
    pub delivered: u64,
    /// Attempts that failed (each retried, or given up).
    pub failed_attempts: u64,
    /// Events given up on after their last retry (about a day on).
    pub abandoned: u64,
    /// Events waiting for a retry now.
    pub retrying: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_success_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_failure_at: Option<String>,
    /// The last failure: a status or a transport error.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_error: String,
}

impl From<pb::ListWebhookDeliveriesResponse> for WebhookDeliveries {
    fn from(r: pb::ListWebhookDeliveriesResponse) -> Self {
        let endpoints = r
            .endpoints
            .into_iter()
            .map(|d| WebhookDelivery {
                url: d.url,
                delivered: d.delivered,
                failed_attempts: d.failed_attempts,
                abandoned: d.abandoned,
                retrying: d.retrying,
                last_success_at: d.last_success_at.map(|t| timestamp(Some(t))),
                last_failure_at: d.last_failure_at.map(|t| timestamp(Some(t))),
                last_error: d.last_error,
            })
            .collect();
        Self { endpoints }
    }
}
