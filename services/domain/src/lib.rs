//! The storefront's shared domain, used by more than one program: the
//! product facts listings filter and sort by (`catalog`), the query
//! language of every collection and its vocabulary (`query`), the indexed
//! listing (`listing`), compact product records (`compact`), strings a
//! build shares (`interned`), customer
//! token claims (`customer_token`), payment idempotency keys
//! (`payment_keys`), resource timestamps (`time`) and
//! builds over every core (`cores`). It depends on the proto crate alone
//! (its errors are `storefront_proto::error`'s, the mesh's one status
//! table); infrastructure (configuration, identity, calls, servers,
//! stores, telemetry) is `storefront_platform`'s.

pub mod catalog;
pub mod compact;
pub mod cores;
pub mod currencies;
pub mod customer_token;
pub mod interned;
pub mod listing;
pub mod markets;
pub mod payment_keys;
pub mod query;
pub mod stock;
pub mod time;
