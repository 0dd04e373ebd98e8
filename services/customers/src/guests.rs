//! Guest shoppers: a session with no account behind it, for carts and
//! checkout. Its tokens carry the `guest` scope (the gateway admits them
//! to carts and checkout only) and refresh like a customer's.

use storefront_platform::error::ServiceError;
use storefront_proto::customers::v1::Session;

use crate::accounts::Accounts;

/// Guest ids never meet account ids (UUIDs) or each other.
const PREFIX: &str = "guest-";

impl Accounts {
    /// A new guest and their first session.
    pub async fn start_guest(&self) -> Result<Session, ServiceError> {
        let guest = format!("{PREFIX}{}", uuid::Uuid::new_v4());
        let sid = uuid::Uuid::new_v4().to_string();
        tracing::info!(guest_id = %guest, "guest session started");
        self.session(&guest, None, &sid).await
    }
}
