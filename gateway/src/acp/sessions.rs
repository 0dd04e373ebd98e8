//! The protocol's five checkout operations (`spec/2026-04-17/openapi/
//! openapi.agentic_checkout.yaml`) over the cart and checkout services.
//! A session is a cart of its own buyer: its id, `cs_{nonce}_{cartId}`,
//! names the cart and the nonce that makes the buyer
//! (`guest-acp-{agent}-{nonce}`), so another agent's call finds nothing
//! and no table maps ids. Buyers are guests: a guest's checkout time and
//! hold limits, and the agent's own hold limits as their network's.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use prost::Message as _;
use storefront_platform::agents;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{
    Cart, CartState, CheckoutStatus, ConfirmCheckoutRequest, CreateCartRequest, PayCheckoutRequest,
    ReleaseCheckoutRequest,
};

use super::guard::AgentCaller;
use super::render::{self, Ended};
use super::steps::{MAX_ITEMS, Owner};
use super::wire::{AcpError, CompleteIn, CreateIn, Message, Session, UpdateIn};
use crate::error::ApiError;
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::state::AppState;

const CANCELED_FOR: Duration = Duration::from_secs(30 * 86_400);

fn canceled_key(id: &str) -> String {
    format!("acp-canceled:{id}")
}

fn not_found() -> AcpError {
    AcpError::invalid(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such checkout session of this agent's",
    )
}

fn owner<'a>(
    state: &'a AppState,
    correlation: &'a CallContext,
    agent: &AgentCaller,
    id: &str,
) -> Result<Owner<'a>, AcpError> {
    let (nonce, cart_id) = agents::session_of(id).ok_or_else(not_found)?;
    Ok(Owner {
        state,
        correlation,
        customer_id: agents::buyer_id(&agent.0.id, nonce),
        cart_id: cart_id.to_string(),
        network: format!("agent:{}", agent.0.id),
    })
}

async fn is_canceled(state: &AppState, id: &str) -> Result<bool, ApiError> {
    let found = state.acp.store.get(&canceled_key(id)).await;
    found
        .map(|f| f.is_some())
        .map_err(|e| ApiError::unavailable("the store", e))
}

/// The session as it stands, with the messages of this request.
async fn shown(owner: &Owner<'_>, id: &str, messages: Vec<Message>) -> Result<Session, ApiError> {
    let cart = owner.cart().await?;
    let checkout = owner.checkout().await?;
    let ended = if is_canceled(owner.state, id).await? {
        Ended::Canceled
    } else {
        Ended::No
    };
    Ok(render::session(
        id,
        &cart,
        checkout.as_ref(),
        ended,
        messages,
    ))
}

type Answer<T> = Result<T, ApiError>;

/// A refusal of the facade's own, through the handlers' error type (the
/// guard puts every error in the protocol's shape, `param` from the field).
fn acp(e: AcpError) -> ApiError {
    let error = ApiError::new(e.status, e.code, e.message);
    match e.param {
        Some(param) => error.field(&param, "", ""),
        None => error,
    }
}

/// `POST /acp/checkout_sessions`.
pub async fn create(
    State(state): State<AppState>,
    correlation: CallContext,
    Extension(agent): Extension<AgentCaller>,
    ApiJson(body): ApiJson<CreateIn>,
) -> Answer<(StatusCode, Json<Session>)> {
    if body.line_items.is_empty() || body.line_items.len() > MAX_ITEMS {
        let message = format!("line_items: 1 to {MAX_ITEMS} items");
        return Err(acp(AcpError::invalid(
            StatusCode::BAD_REQUEST,
            "invalid",
            message,
        )
        .param("$.line_items")));
    }
    super::markets::allowed(
        &state,
        &correlation,
        &agent.0,
        &body.currency,
        body.fulfillment_details.as_ref(),
    )
    .await?;
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let customer_id = agents::buyer_id(&agent.0.id, &nonce);
    let message = CreateCartRequest {
        customer_id,
        currency_code: body.currency.to_ascii_uppercase(),
    };
    let bytes = state
        .downstreams
        .cart()
        .create_cart_bytes(&correlation, message)
        .await?;
    let cart = Cart::decode(bytes).map_err(ApiError::bad_gateway)?;
    let cart_id = cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default();
    let id = agents::session_id(&nonce, &cart_id);
    let owner = owner(&state, &correlation, &agent, &id).map_err(acp)?;
    let mut messages = Vec::new();
    owner
        .set_lines(&cart, &body.line_items, &mut messages)
        .await?;
    let address = body
        .fulfillment_details
        .as_ref()
        .and_then(|f| f.address.as_ref());
    if let Some(address) = address.filter(|_| messages.is_empty()) {
        let method = body
            .selected_fulfillment_options
            .first()
            .map(|s| s.option_id.as_str());
        owner.open(address, method, &mut messages).await?;
    }
    Ok((
        StatusCode::CREATED,
        Json(shown(&owner, &id, messages).await?),
    ))
}

/// `GET /acp/checkout_sessions/{id}`.
pub async fn get(
    State(state): State<AppState>,
    correlation: CallContext,
    Extension(agent): Extension<AgentCaller>,
    Path(id): Path<String>,
) -> Answer<Json<Session>> {
    let owner = owner(&state, &correlation, &agent, &id).map_err(acp)?;
    Ok(Json(shown(&owner, &id, Vec::new()).await?))
}

/// 405 `session_{how}`: the session is completed or canceled.
fn ended(how: &str) -> ApiError {
    let message = format!("the checkout session is {how}");
    acp(AcpError::invalid(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("session_{how}"),
        message,
    ))
}

/// 405 for a session that is completed or canceled.
async fn writable(owner: &Owner<'_>, id: &str) -> Answer<Cart> {
    let cart = owner.cart().await?;
    if cart.state == CartState::Ordered as i32 {
        return Err(ended("completed"));
    }
    if is_canceled(owner.state, id).await? {
        return Err(ended("canceled"));
    }
    Ok(cart)
}

/// `POST /acp/checkout_sessions/{id}`: items replace the session's whole;
/// a new address or changed items open the checkout again (the hold
/// follows the items), keeping the chosen shipping while it is offered.
pub async fn update(
    State(state): State<AppState>,
    correlation: CallContext,
    Extension(agent): Extension<AgentCaller>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<UpdateIn>,
) -> Answer<Json<Session>> {
    let owner = owner(&state, &correlation, &agent, &id).map_err(acp)?;
    let cart = writable(&owner, &id).await?;
    let current = owner.checkout().await?;
    let mut messages = Vec::new();
    if let Some(items) = &body.line_items {
        if items.len() > MAX_ITEMS {
            let message = format!("line_items: at most {MAX_ITEMS} items");
            return Err(acp(AcpError::invalid(
                StatusCode::BAD_REQUEST,
                "invalid",
                message,
            )
            .param("$.line_items")));
        }
        owner.set_lines(&cart, items, &mut messages).await?;
    }
    let given = body
        .fulfillment_details
        .as_ref()
        .and_then(|f| f.address.clone());
    let held = current
        .as_ref()
        .and_then(|s| s.shipping_address.as_ref())
        .and_then(|a| render::address_in(a).address);
    let chosen = body
        .selected_fulfillment_options
        .first()
        .map(|s| s.option_id.clone());
    let kept = current
        .as_ref()
        .map(|s| s.shipping_method_id.clone())
        .filter(|m| !m.is_empty());
    let reopen = given.is_some() || (body.line_items.is_some() && current.is_some());
    match (reopen, given.or(held), current) {
        (true, Some(address), _) if messages.is_empty() => {
            owner
                .open(&address, chosen.or(kept).as_deref(), &mut messages)
                .await?;
        }
        (false, _, Some(session)) if chosen.is_some() => {
            owner
                .choose(
                    &session.id,
                    chosen.as_deref().unwrap_or_default(),
                    &mut messages,
                )
                .await?;
        }
        _ => {}
    }
    Ok(Json(shown(&owner, &id, messages).await?))
}

/// `POST /acp/checkout_sessions/{id}/complete`: the delegated payment
/// token pays the session's total, then the order is made (both
/// retry-safe, as the REST API's). A declined token is a message.
pub async fn complete(
    State(state): State<AppState>,
    correlation: CallContext,
    Extension(agent): Extension<AgentCaller>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<CompleteIn>,
) -> Answer<Json<Session>> {
    let owner = owner(&state, &correlation, &agent, &id).map_err(acp)?;
    if is_canceled(&state, &id).await? {
        return Err(ended("canceled"));
    }
    let Some(session) = owner.checkout().await? else {
        let message = "the session needs a fulfillment address before payment";
        return Err(acp(AcpError::invalid(
            StatusCode::BAD_REQUEST,
            "missing",
            message,
        )
        .param("$.fulfillment_details.address")));
    };
    let token = body
        .payment_data
        .instrument
        .map(|i| i.credential.token)
        .filter(|t| !t.is_empty());
    let Some(token) = token else {
        let param = "$.payment_data.instrument.credential.token";
        return Err(acp(AcpError::invalid(
            StatusCode::BAD_REQUEST,
            "missing",
            "a payment token is required",
        )
        .param(param)));
    };
    let confirmed = session.status == CheckoutStatus::Confirmed as i32;
    if !confirmed {
        let pay = PayCheckoutRequest {
            customer_id: owner.customer_id.clone(),
            session_id: session.id.clone(),
            payment_method: token,
        };
        let paid = state
            .downstreams
            .cart()
            .pay_checkout(&correlation, pay)
            .await?;
        if paid.declined {
            let declined = Message::error(
                "payment_declined",
                Some("$.payment_data".into()),
                "the payment was declined: try another",
            );
            return Ok(Json(shown(&owner, &id, vec![declined]).await?));
        }
    }
    let confirm = ConfirmCheckoutRequest {
        customer_id: owner.customer_id.clone(),
        session_id: session.id.clone(),
    };
    let reply = state
        .downstreams
        .cart()
        .confirm_checkout(&correlation, confirm)
        .await?;
    match reply.outcome {
        Some(Outcome::Confirmed(done)) => {
            let mut answer = shown(&owner, &id, Vec::new()).await?;
            answer.order = Some(render::order(&id, &done.order_id, &state.acp.order_url));
            Ok(Json(answer))
        }
        Some(Outcome::Repriced(repriced)) => {
            let warning = Message {
                kind: "warning",
                code: Some("price_change"),
                param: None,
                content_type: "plain",
                content: repriced.message,
            };
            Ok(Json(shown(&owner, &id, vec![warning]).await?))
        }
        None => Err(ApiError::internal()),
    }
}

/// `POST /acp/checkout_sessions/{id}/cancel`: the stock held goes back at
/// once; the session shows `canceled` from then on.
pub async fn cancel(
    State(state): State<AppState>,
    correlation: CallContext,
    Extension(agent): Extension<AgentCaller>,
    Path(id): Path<String>,
) -> Answer<Json<Session>> {
    let owner = owner(&state, &correlation, &agent, &id).map_err(acp)?;
    writable(&owner, &id).await?;
    if let Some(session) = owner.checkout().await?
        && session.status == CheckoutStatus::Open as i32
    {
        let release = ReleaseCheckoutRequest {
            customer_id: owner.customer_id.clone(),
            session_id: session.id,
        };
        state
            .downstreams
            .cart()
            .release_checkout(&correlation, release)
            .await?;
    }
    let marked = state
        .acp
        .store
        .insert(&canceled_key(&id), b"1", Some(CANCELED_FOR))
        .await;
    marked.map_err(|e| ApiError::unavailable("the store", e))?;
    Ok(Json(shown(&owner, &id, Vec::new()).await?))
}
