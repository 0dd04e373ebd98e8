//! Which markets an agent may sell in, and what the shop's markets offer
//! agents (the discovery document's currencies and locales).

use axum::http::StatusCode;
use storefront_domain::markets::MarketSet;
use storefront_proto::cart::v1::GetMarketsRequest;

use super::wire::FulfillmentDetails;
use crate::downstream::Downstreams;
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::state::AppState;
use storefront_platform::agents::Agent;

/// The shop's markets as the cart service holds them.
pub async fn markets(
    downstreams: &Downstreams,
    correlation: &CallContext,
) -> Result<MarketSet, ApiError> {
    let reply = downstreams
        .cart()
        .get_markets(correlation, GetMarketsRequest {})
        .await?;
    serde_json::from_slice(&reply.json).map_err(ApiError::bad_gateway)
}

/// 422 unless one of the agent's markets (every market when it names
/// none) sells in `currency`, and to the address's country when given.
pub async fn allowed(
    state: &AppState,
    correlation: &CallContext,
    agent: &Agent,
    currency: &str,
    to: Option<&FulfillmentDetails>,
) -> Result<(), ApiError> {
    let set = markets(&state.downstreams, correlation).await?;
    let country = to
        .and_then(|f| f.address.as_ref())
        .map(|a| a.country.to_ascii_uppercase());
    let fits = set.markets.iter().any(|m| {
        (agent.markets.is_empty() || agent.markets.contains(&m.id))
            && m.currencies
                .iter()
                .any(|c| c.code.eq_ignore_ascii_case(currency))
            && country.as_ref().is_none_or(|c| m.countries.contains(c))
    });
    if fits {
        return Ok(());
    }
    let mut offered: Vec<String> = set
        .markets
        .iter()
        .filter(|m| agent.markets.is_empty() || agent.markets.contains(&m.id))
        .flat_map(|m| m.currencies.iter().map(|c| c.code.to_ascii_lowercase()))
        .collect();
    offered.sort();
    offered.dedup();
    let message = match country {
        Some(c) => format!(
            "this agent sells in {} to no market shipping to {c} in that currency",
            offered.join(", ")
        ),
        None => format!(
            "currency must be one this agent sells in: {}",
            offered.join(", ")
        ),
    };
    Err(
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message).field(
            "$.currency",
            "",
            "",
        ),
    )
}
