//! The kinds of event on the orders stream (its `type` field).

pub const CREATED: &str = "order.created";
pub const CANCELLED: &str = "order.cancelled";
pub const STATUS_CHANGED: &str = "order.status_changed";
/// An order made with an authorized payment (with `order.created`); its
/// later moves are `payment::Move::event`.
pub const PAYMENT_AUTHORIZED: &str = "payment.authorized";
