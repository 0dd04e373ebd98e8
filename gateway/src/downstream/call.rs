//! A request's calls carry its correlation id and its route's deadline.

use std::time::Duration;

use storefront_platform::client::call::CallScope;
use tonic::metadata::{Ascii, MetadataValue};

use crate::middleware::call_context::CallContext;

impl CallScope for CallContext {
    fn correlation(&self) -> Option<MetadataValue<Ascii>> {
        MetadataValue::try_from(self.correlation_id.as_bytes()).ok()
    }

    fn deadline(&self) -> Option<Duration> {
        self.deadline
    }
}
