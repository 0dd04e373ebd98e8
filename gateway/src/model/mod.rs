//! The JSON representations the gateway owns (described in `openapi.json`),
//! translated from the internal protobuf messages by moving, not copying.

pub mod bounded;
pub mod cart;
pub mod catalog;
pub mod content;
pub mod customers;
pub mod locale;
pub mod merge;
pub mod search;
pub mod sessions;
pub mod webhooks;

pub use storefront_json::{common, orders, payments, totals};
