//! End-to-end tests: the whole mesh in-process on loopback ports, spoken to
//! over real HTTP and real gRPC, as storefronts and services do.

mod auth_tokens;
mod captcha;
mod categories;
mod customers;
mod edge;
mod health;
mod helpers;
mod identity;
mod logs;
mod openapi;
mod products;
mod query_errors;
