//! The platform every program of the mesh runs on, written once: the
//! topology, typed configuration, the error type and its gRPC mapping,
//! service identity (tokens, verifier, dev issuer), calls between programs,
//! the gRPC server bootstrap, graceful shutdown, the shared store, the CPU
//! pool and telemetry. The storefront's shared domain is
//! `storefront_domain`'s.

pub mod agents;
pub mod call_context;
pub mod client;
pub mod cpu;
pub mod env;
/// The mesh's one error type and status table (defined beside the wire
/// types, so that the pure domain crate needs nothing of this one).
pub use storefront_proto::error;
pub mod identity;
pub mod known_settings;
pub mod listen;
pub mod process;
pub mod recent;
pub mod reply;
pub mod secret_files;
pub mod server;
pub mod service;
pub mod settings;
pub mod shared_document;
pub mod shutdown;
pub mod store;
pub mod telemetry;
/// Test support: compiled for tests only (this crate's, and others' through
/// the `testsuite` feature their dev-dependencies turn on), never into a
/// program.
#[cfg(any(test, feature = "testsuite"))]
pub mod testing;
pub use storefront_proto::text;
pub mod topology;
