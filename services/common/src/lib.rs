//! What every service of the mesh shares, written once: typed configuration,
//! the error type and its gRPC mapping, service identity (tokens, verifier,
//! dev issuer), the gRPC server bootstrap and telemetry.

pub mod call_context;
pub mod catalog;
pub mod client;
pub mod compact;
pub mod cpu;
pub mod customer_token;
pub mod env;
pub mod error;
pub mod identity;
pub mod listing;
pub mod process;
pub mod query;
pub mod server;
pub mod settings;
pub mod shutdown;
pub mod store;
pub mod telemetry;
pub mod testing;
pub mod time;
pub mod topology;
