//! The order stream for a back office that keeps its own place: every
//! order change as a CloudEvent in JSON, the order as the public API
//! shows it, each with its `sequence` to read on from (docs/events.md).

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use serde_json::Value;
use storefront_json::events::CloudEvent;
use storefront_platform::store::is_position;
use storefront_proto::error::codes;
use storefront_proto::orders::v1::{ListOrderEventsRequest, ListWebhookDeliveriesRequest};
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Type};

use super::{InternalState, ServiceCaller};
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::webhooks::WebhookDeliveries;
use crate::query::schema::optional_query;
use crate::query::{feed_limit, invalid_parameter};

/// The query of `GET /internal/events`.
pub struct EventsQuery(ListOrderEventsRequest);

impl<S: Send + Sync> FromRequestParts<S> for EventsQuery {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        events_request(parts.uri.query()).map(EventsQuery)
    }
}

const POSITION: &str = "^[0-9]{1,20}-[0-9]{1,20}$";

impl IntoParams for EventsQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let after = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(POSITION));
        let limit = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(100))
            .default(Some(20.into()));
        let after_text =
            "The `sequence` of the last event read; absent: from the oldest the stream keeps.";
        vec![
            optional_query("after", after_text, after.into()).build(),
            optional_query(
                "limit",
                "Events to answer, 1 to 100 (default 20).",
                limit.into(),
            )
            .build(),
        ]
    }
}

fn events_request(raw: Option<&str>) -> Result<ListOrderEventsRequest, ApiError> {
    let mut request = ListOrderEventsRequest::default();
    for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        match key.as_ref() {
            "after" if is_position(&value) => request.after = value.into_owned(),
            "after" => {
                let message = "after must be the sequence of an event this port gave".to_string();
                return Err(invalid_parameter("after", codes::INVALID_FORMAT, message));
            }
            "limit" => request.limit = feed_limit(&value)?,
            _ => {}
        }
    }
    Ok(request)
}

/// Order events after a position, oldest first: each a CloudEvent 1.0
/// (structured JSON) whose `data` is the order after the change, with
/// its `sequence` on the stream. Delivery is at least once: skip an `id`
/// seen before. The stream keeps about the last million events; a
/// reader further behind reconciles with `GET /internal/orders`.
#[utoipa::path(get, path = "/internal/events", tag = "Orders", security(("BearerAuth" = [])),
    params(EventsQuery),
    responses(
        (status = 200, description = "Up to `limit` events after `after`, oldest first (empty: none yet; ask again later with the same `after`)", body = Vec<CloudEvent>),
        (status = 400, description = "INVALID_QUERY_PARAMETER: `after` not a sequence, `limit` out of 1 to 100", body = ErrorBody),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `events`", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn list(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
    EventsQuery(request): EventsQuery,
) -> Result<Json<Vec<Value>>, ApiError> {
    let page = state
        .downstreams
        .orders()
        .list_order_events(&correlation, request)
        .await?;
    let events = page
        .events
        .into_iter()
        .map(|e| {
            let mut event: serde_json::Map<String, Value> = serde_json::from_slice(&e.cloudevent)
                .map_err(|err| {
                ApiError::bad_gateway(format!("an order event's JSON: {err}"))
            })?;
            event.insert("sequence".into(), Value::String(e.position));
            Ok(Value::Object(event))
        })
        .collect::<Result<_, ApiError>>()?;
    Ok(Json(events))
}

/// Where delivering order events to each webhook stands
/// (`ORDER_WEBHOOK_URLS`; none configured: no endpoints).
#[utoipa::path(get, path = "/internal/webhooks", tag = "Orders", security(("BearerAuth" = [])),
    responses(
        (status = 200, description = "Each endpoint's deliveries, failures, retries waiting and events given up, counted over every orders replica", body = WebhookDeliveries),
        (status = 401, description = "No valid identity token", body = ErrorBody),
        (status = 403, description = "The account may not call `webhooks`", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED (RATE_LIMIT_SERVICE)", body = ErrorBody),
    ))]
pub async fn deliveries(
    State(state): State<InternalState>,
    correlation: CallContext,
    _caller: ServiceCaller,
) -> Result<Json<WebhookDeliveries>, ApiError> {
    let states = state
        .downstreams
        .orders()
        .list_webhook_deliveries(&correlation, ListWebhookDeliveriesRequest {})
        .await?;
    Ok(Json(WebhookDeliveries::from(states)))
}
