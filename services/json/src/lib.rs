//! The public API's JSON representations that more than the gateway
//! needs: an order as the API shows it is also the `data` of the order
//! events the orders service publishes (CloudEvents on the stream, and
//! webhooks). The gateway serves and documents them (utoipa); each is
//! made from its protobuf message by moving, not copying.

use std::borrow::Cow;
use std::fmt;

pub mod common;
pub mod events;
pub mod lines;
pub mod orders;
pub mod payments;
pub mod totals;

/// A message from a service that lacks what its JSON needs (a bug of
/// that service: the gateway answers it 502).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub Cow<'static, str>);

impl Invalid {
    pub fn new(message: impl Into<Cow<'static, str>>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Invalid {}
