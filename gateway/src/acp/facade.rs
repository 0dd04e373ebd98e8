//! What the facade keeps of its own, shared by its handlers through the
//! app's state.

use storefront_platform::store::Store;

/// What the facade keeps of its own.
pub struct Facade {
    /// Canceled sessions, for as long as a cart lives idle.
    pub store: Store,
    /// `ACP_ORDER_URL`: the buyer's page of an order, `{orderId}` replaced.
    pub order_url: String,
    /// `ACP_BASE_URL`: where agents reach the facade (discovery's `api_base_url`).
    pub base_url: String,
}
