//! The Agentic Commerce Protocol facade (docs/agents.md): AI agents shop
//! through the protocol's checkout sessions (`/acp/checkout_sessions`),
//! a thin layer over the same cart, checkout and payment calls the REST
//! API makes. The protocol's own OpenAPI document is its contract, served
//! at `/acp/openapi.json`; `/.well-known/acp.json` is its discovery.

pub mod facade;
pub mod guard;
mod markets;
pub mod mcp;
pub use markets::markets;
mod render;
pub mod sessions;
mod shown;
mod steps;
mod tools;
pub mod wire;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::json;

use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::state::AppState;

/// The protocol's OpenAPI document of the checkout (Apache-2.0, from
/// agentic-commerce-protocol/agentic-commerce-protocol at 2026-04-17,
/// converted to JSON): the contract the facade answers to.
const CONTRACT: &str = include_str!("../../assets/acp/openapi.agentic_checkout.json");

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/acp/checkout_sessions", post(sessions::create))
        .route(
            "/acp/checkout_sessions/{id}",
            get(sessions::get).post(sessions::update),
        )
        .route(
            "/acp/checkout_sessions/{id}/complete",
            post(sessions::complete),
        )
        .route("/acp/checkout_sessions/{id}/cancel", post(sessions::cancel))
        .route(guard::CONTRACT, get(contract))
        .route("/.well-known/acp.json", get(discovery))
}

async fn contract() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], CONTRACT)
}

/// What an agent reads first: the versions, the base URL, the transports
/// and what the shop's markets sell in.
async fn discovery(
    State(state): State<AppState>,
    correlation: CallContext,
) -> Result<impl IntoResponse, ApiError> {
    let set = markets::markets(&state.downstreams, &correlation).await?;
    let mut currencies: Vec<String> = set
        .markets
        .iter()
        .flat_map(|m| m.currencies.iter().map(|c| c.code.to_ascii_lowercase()))
        .collect();
    let mut locales: Vec<String> = set
        .markets
        .iter()
        .flat_map(|m| m.locales.iter().cloned())
        .collect();
    currencies.sort();
    currencies.dedup();
    locales.sort();
    locales.dedup();
    let document = json!({
        "protocol": {
            "name": "acp",
            "version": guard::VERSIONS[0],
            "supported_versions": guard::VERSIONS,
        },
        "api_base_url": state.acp.base_url,
        "transports": ["rest", "mcp"],
        "capabilities": {
            "services": ["checkout"],
            "supported_currencies": currencies,
            "supported_locales": locales,
        }
    });
    Ok((
        [(header::CACHE_CONTROL, "public, max-age=300")],
        axum::Json(document),
    ))
}
