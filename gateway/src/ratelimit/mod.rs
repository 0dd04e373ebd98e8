//! Rate limiting (SPEC 8, CONTRACT.md): GCRA per scope — client IP, customer
//! session, and stricter budgets for search and login (login also per email
//! address). In process with `governor` (a maintained GCRA implementation,
//! keyed, lock-free); with Redis, one Lua script per decision so every
//! gateway replica shares the budget.

mod client_ip;
mod limiter;
pub mod middleware;

pub use client_ip::{TrustedProxies, client_ip};
pub use limiter::{Decision, Limiter, Quota, Scope};
