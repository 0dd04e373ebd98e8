//! The JSON representations the gateway owns (CONTRACT.md "Resources"),
//! translated from the internal protobuf messages by moving, not copying.

pub mod catalog;
pub mod common;
pub mod customers;
