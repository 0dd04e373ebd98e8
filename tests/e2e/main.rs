//! End-to-end tests: the whole mesh in-process on loopback ports, spoken to
//! over real HTTP and real gRPC, as storefronts and services do.

mod auth_tokens;
mod balancing;
mod bounded_state;
mod budgets;
mod caching;
mod captcha;
mod cart_rules;
mod catalog_changes;
mod catalog_feed;
mod categories;
mod checkout_money;
mod content;
mod cors;
mod customers;
mod deploy;
mod durability;
mod edge;
mod fake;
mod handlers;
mod health;
mod helpers;
mod hostile;
mod hostile_fields;
mod identity;
mod journey;
mod logs;
mod openapi;
mod orders;
mod processes;
mod products;
mod query_errors;
mod ratelimit;
mod resilience;
mod search;
mod shop_promotions;
