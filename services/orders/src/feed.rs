//! The order stream read by position (`GET /internal/events`): each
//! event's CloudEvent as the stream carries it, for a back office that
//! keeps its own place instead of joining a consumer group.

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::store::{Store, is_position};
use storefront_proto::orders::v1::{
    ListOrderEventsRequest, ListOrderEventsResponse, StreamedOrderEvent,
};

use crate::outbox::{CLOUDEVENT, STREAM};
use crate::updates::page_limit;

pub async fn list(
    store: &Store,
    req: &ListOrderEventsRequest,
) -> Result<ListOrderEventsResponse, ServiceError> {
    let limit = page_limit(req.limit)?;
    if !req.after.is_empty() && !is_position(&req.after) {
        return Err(ServiceError::new(
            ErrorKind::BadRequest,
            "INVALID_POSITION",
            "after must be the sequence of an event (<ms>-<n>)",
        ));
    }
    let entries = store
        .stream_after(STREAM, &req.after, limit as usize)
        .await?;
    let events = entries
        .into_iter()
        .filter_map(|entry| {
            // Entries written before events carried JSON have none.
            let cloudevent = entry.field(CLOUDEVENT)?.to_vec();
            Some(StreamedOrderEvent {
                position: entry.id,
                cloudevent,
            })
        })
        .collect();
    Ok(ListOrderEventsResponse { events })
}
