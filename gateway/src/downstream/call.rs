//! A request's calls carry its correlation id and its route's deadline
//! (`CallContext`: the downstream layer's; the middleware fills it in).

use std::time::Duration;

use storefront_platform::client::call::CallScope;
use tonic::metadata::{Ascii, MetadataValue};

use axum::http::HeaderValue;

/// What every downstream call of a request carries: the correlation id (as
/// the header value sent on) and the route's deadline, if it has its own.
#[derive(Debug, Clone)]
pub struct CallContext {
    pub correlation_id: HeaderValue,
    pub deadline: Option<Duration>,
}

impl CallScope for CallContext {
    fn correlation(&self) -> Option<MetadataValue<Ascii>> {
        MetadataValue::try_from(self.correlation_id.as_bytes()).ok()
    }

    fn deadline(&self) -> Option<Duration> {
        self.deadline
    }
}
