//! Rate limiting (docs/rate-limits.md): GCRA per scope — client IP, customer
//! session, and stricter budgets for search and login. In process with
//! `governor` (a maintained GCRA implementation, keyed, lock-free); with
//! Redis, one Lua script per decision so every gateway replica shares the
//! budget. Logins are also limited per account, counting only failed
//! password checks (`failures`).

mod client_ip;
mod failures;
mod limiter;
pub mod middleware;

pub use client_ip::{Client, TrustedProxies, client_ip};
pub use failures::{LoginFailures, normalise};
pub use limiter::{Decision, Limiter, Quota, Scope};
