//! Order events as CloudEvents 1.0 in JSON (structured mode): what the
//! order stream carries beside its protobuf, what `GET /internal/events`
//! lists and what webhooks deliver. A back office reads them with any
//! CloudEvents SDK, without our proto files.

use serde::Serialize;
use storefront_proto::orders::v1::Order;
use utoipa::ToSchema;

use crate::Invalid;
use crate::orders::OrderV2;

/// Where the events come from (`source`).
pub const SOURCE: &str = "/storefront/orders";
/// Every event type is a kind of the stream under this prefix:
/// `order.created` is `com.storefront.order.created`.
pub const TYPE_PREFIX: &str = "com.storefront.";
/// The media type of one event in structured mode.
pub const MEDIA_TYPE: &str = "application/cloudevents+json";

/// One order event.
#[derive(Debug, Serialize, ToSchema)]
pub struct CloudEvent {
    /// Always `1.0`.
    #[schema(example = "1.0")]
    pub specversion: &'static str,
    /// The same for every delivery of one change (the order's id and
    /// version, and the payment move's kind): skip an id seen before.
    #[schema(example = "9b2f6c1e-3f4a-4d7e-9a51-0c2d9e1f7a10.1")]
    pub id: String,
    #[schema(example = "/storefront/orders")]
    pub source: &'static str,
    /// `com.storefront.order.created`, `.order.cancelled`,
    /// `.order.status_changed`, `.payment.authorized`, `.payment.captured`,
    /// `.payment.voided`, `.payment.refunded`.
    #[serde(rename = "type")]
    #[schema(example = "com.storefront.order.created")]
    pub kind: String,
    /// The order's id.
    pub subject: String,
    /// When the change happened (RFC 3339).
    #[schema(example = "2026-11-27T09:30:00Z")]
    pub time: String,
    #[schema(example = "application/json")]
    pub datacontenttype: &'static str,
    /// The order after the change, as `GET /orders/{orderId}` (v2) shows it.
    pub data: OrderV2,
    /// Where the event stands on the stream: pass the last one read as
    /// `after` to `GET /internal/events`. Absent from webhooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "1764236400000-0")]
    pub sequence: Option<String>,
}

/// The CloudEvent of a change of `order`: event `id`, stream `kind`
/// (`order.created`), at `time`.
pub fn order_event(
    id: String,
    kind: &str,
    time: String,
    order: Order,
) -> Result<CloudEvent, Invalid> {
    let data = OrderV2::try_from(order)?;
    Ok(CloudEvent {
        specversion: "1.0",
        id,
        source: SOURCE,
        kind: format!("{TYPE_PREFIX}{kind}"),
        subject: data.common.meta.id.clone(),
        time,
        datacontenttype: "application/json",
        data,
        sequence: None,
    })
}
