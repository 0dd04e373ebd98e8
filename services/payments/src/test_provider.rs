//! The `test` provider: the embedded default locally and in development
//! (refused in production and staging), kept in memory. It mirrors
//! Stripe's test payment methods so a client's code is the same against
//! either: `pm_card_visa` authorizes, `pm_card_visa_chargeDeclined` is
//! declined (`generic_decline`), `pm_card_threeDSecure2Required` needs an
//! action the shopper completes (`complete_action`). Every change is a
//! signed webhook delivery, as Stripe's (`deliveries`).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::error::PaymentError;
use crate::payment::{Money, NextAction, Payment, PaymentStatus};
use crate::provider::{Answer, PaymentProvider};
use crate::webhook::{self, Event};

pub const VISA: &str = "pm_card_visa";
/// An agent's delegated payment token (the Agentic Commerce Protocol's
/// shared payment tokens, `spt_...`): any authorizes as Visa but these,
/// which are declined and need 3-D Secure as their cards are.
pub const SPT_DECLINED: &str = "spt_test_declined";
pub const SPT_THREE_D_SECURE: &str = "spt_test_3ds";
pub const DECLINED: &str = "pm_card_visa_chargeDeclined";
pub const THREE_D_SECURE: &str = "pm_card_threeDSecure2Required";
/// The longest payment method id taken.
pub const MAX_METHOD_CHARS: usize = 255;
/// Deliveries kept for their deliverer at most: past it the oldest go
/// (logged), so a deliverer slower than the payments bounds the memory.
pub const MAX_PENDING_DELIVERIES: usize = 10_000;

/// A signed delivery: the `Stripe-Signature` header and the body.
pub type Delivery = (String, Vec<u8>);

#[derive(Default)]
struct State {
    payments: HashMap<String, Payment>,
    /// Idempotency key -> what the call was, and its answer.
    answered: HashMap<String, (String, Result<Payment, PaymentError>)>,
    deliveries: VecDeque<Delivery>,
    events: u64,
}

pub struct TestProvider {
    secret: String,
    state: Mutex<State>,
}

/// The test card a method stands for: delegated tokens as the cards they
/// act as; a card as itself.
fn as_test_card(method: &str) -> &str {
    match method {
        SPT_DECLINED => DECLINED,
        SPT_THREE_D_SECURE => THREE_D_SECURE,
        m if m.starts_with("spt_") => VISA,
        m => m,
    }
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn invalid(message: impl Into<String>) -> PaymentError {
    PaymentError::Invalid(message.into())
}

fn state_error(payment: &Payment, what: &str) -> PaymentError {
    PaymentError::State(format!("a {:?} payment cannot be {what}", payment.status))
}

fn ready<T: Send + 'static>(answer: Result<T, PaymentError>) -> Answer<'static, T> {
    Box::pin(async move { answer })
}

impl TestProvider {
    /// Signs its webhooks with `secret`.
    pub fn new(secret: impl Into<String>) -> Self {
        Self {
            secret: secret.into(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The signed deliveries since the last call, oldest first.
    pub fn deliveries(&self) -> Vec<Delivery> {
        std::mem::take(&mut self.state().deliveries).into()
    }

    /// The shopper finished (or abandoned) the 3-D Secure page.
    pub fn complete_action(&self, id: &str, passed: bool) -> Result<Payment, PaymentError> {
        let mut state = self.state();
        let payment = found(&mut state, id)?;
        if payment.status != PaymentStatus::RequiresAction {
            return Err(state_error(payment, "authenticated"));
        }
        payment.next_action = None;
        if passed {
            payment.status = PaymentStatus::Authorized;
        } else {
            payment.status = PaymentStatus::RequiresPaymentMethod;
            payment.decline_code = Some("authentication_required".into());
        }
        let payment = payment.clone();
        let kind = if passed {
            "payment_intent.amount_capturable_updated"
        } else {
            "payment_intent.payment_failed"
        };
        self.deliver(&mut state, kind, &payment);
        Ok(payment)
    }

    fn deliver(&self, state: &mut State, kind: &str, payment: &Payment) {
        state.events += 1;
        let body = json!({
            "id": format!("evt_test_{}", state.events),
            "type": kind,
            "data": {"object": {
                "id": payment.id,
                "amount": payment.amount.amount,
                "currency": payment.amount.currency.to_ascii_lowercase(),
            }},
        })
        .to_string()
        .into_bytes();
        let header = webhook::sign(&self.secret, now_secs(), &body);
        if state.deliveries.len() >= MAX_PENDING_DELIVERIES {
            state.deliveries.pop_front();
            tracing::warn!("a test payment webhook was dropped: its deliverer is behind");
        }
        state.deliveries.push_back((header, body));
    }

    /// Runs `change` once per idempotency key: a repeat answers what the
    /// first did; the same key for another call is refused.
    fn once(
        &self,
        key: &str,
        call: String,
        change: impl FnOnce(&Self, &mut State) -> Result<Payment, PaymentError>,
    ) -> Result<Payment, PaymentError> {
        let mut state = self.state();
        if let Some((earlier, answer)) = state.answered.get(key) {
            if *earlier != call {
                return Err(invalid("this idempotency key was used for another request"));
            }
            return answer.clone();
        }
        let answer = change(self, &mut state);
        state
            .answered
            .insert(key.to_string(), (call, answer.clone()));
        answer
    }

    fn confirm_in(
        &self,
        state: &mut State,
        id: &str,
        method: &str,
    ) -> Result<Payment, PaymentError> {
        if method.is_empty() || method.chars().count() > MAX_METHOD_CHARS {
            return Err(invalid(format!(
                "a payment method is 1 to {MAX_METHOD_CHARS} characters"
            )));
        }
        let payment = found(state, id)?;
        if payment.status != PaymentStatus::RequiresPaymentMethod {
            return Err(state_error(payment, "confirmed"));
        }
        payment.payment_method = Some(method.to_string());
        payment.decline_code = None;
        let (kind, outcome) = match as_test_card(method) {
            VISA => {
                payment.status = PaymentStatus::Authorized;
                ("payment_intent.amount_capturable_updated", Ok(()))
            }
            DECLINED => {
                payment.decline_code = Some("generic_decline".into());
                let declined = PaymentError::Declined {
                    decline_code: "generic_decline".into(),
                };
                ("payment_intent.payment_failed", Err(declined))
            }
            THREE_D_SECURE => {
                payment.status = PaymentStatus::RequiresAction;
                payment.next_action = Some(NextAction {
                    kind: "redirect_to_url".into(),
                    // The storefront's own page for it, relative to its API.
                    url: Some(format!("/payments/test/{id}/authenticate")),
                });
                ("payment_intent.requires_action", Ok(()))
            }
            _ => {
                let known =
                    [VISA, DECLINED, THREE_D_SECURE, "spt_... (an agent's token)"].join(", ");
                return Err(invalid(format!("the test provider takes {known}")));
            }
        };
        let payment = payment.clone();
        self.deliver(state, kind, &payment);
        outcome.map(|()| payment)
    }
}

fn found<'s>(state: &'s mut State, id: &str) -> Result<&'s mut Payment, PaymentError> {
    state
        .payments
        .get_mut(id)
        .ok_or_else(|| PaymentError::NotFound(id.chars().take(64).collect()))
}

/// `amount` of what is left (`left`), all of it when none.
fn part(amount: Option<i64>, left: i64) -> Result<i64, PaymentError> {
    let amount = amount.unwrap_or(left);
    if amount < 1 || amount > left {
        return Err(invalid(format!("an amount from 1 to {left}")));
    }
    Ok(amount)
}

impl PaymentProvider for TestProvider {
    fn name(&self) -> &'static str {
        "test"
    }

    fn create(
        &self,
        amount: Money,
        reference: &str,
        key: &str,
        method: Option<&str>,
    ) -> Answer<'_, Payment> {
        let call = format!("create {amount:?} {reference} {method:?}");
        ready(self.once(key, call, |provider, state| {
            let code_ok = amount.currency.len() == 3
                && amount.currency.bytes().all(|b| b.is_ascii_uppercase());
            if amount.amount < 1 || !code_ok {
                return Err(invalid("an amount of at least 1 in an ISO 4217 currency"));
            }
            let id = format!("pi_test_{}", uuid::Uuid::new_v4().simple());
            let payment = Payment {
                client_secret: Some(format!("{id}_secret_{}", uuid::Uuid::new_v4().simple())),
                id: id.clone(),
                status: PaymentStatus::RequiresPaymentMethod,
                amount,
                amount_captured: 0,
                amount_refunded: 0,
                next_action: None,
                payment_method: None,
                decline_code: None,
                reference: reference.to_string(),
            };
            state.payments.insert(id.clone(), payment.clone());
            match method {
                Some(method) => provider.confirm_in(state, &id, method),
                None => Ok(payment),
            }
        }))
    }

    fn confirm(&self, id: &str, method: &str, key: &str) -> Answer<'_, Payment> {
        let call = format!("confirm {id} {method}");
        ready(self.once(key, call, |provider, state| {
            provider.confirm_in(state, id, method)
        }))
    }

    fn get(&self, id: &str) -> Answer<'_, Payment> {
        let mut state = self.state();
        ready(found(&mut state, id).map(|p| p.clone()))
    }

    fn capture(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment> {
        let call = format!("capture {id} {amount:?}");
        ready(self.once(key, call, |provider, state| {
            let payment = found(state, id)?;
            if payment.status != PaymentStatus::Authorized {
                return Err(state_error(payment, "captured"));
            }
            payment.amount_captured = part(amount, payment.amount.amount)?;
            payment.status = PaymentStatus::Captured;
            let payment = payment.clone();
            provider.deliver(state, "payment_intent.succeeded", &payment);
            Ok(payment)
        }))
    }

    fn void(&self, id: &str, key: &str) -> Answer<'_, Payment> {
        let call = format!("void {id}");
        ready(self.once(key, call, |provider, state| {
            let payment = found(state, id)?;
            use PaymentStatus::*;
            if !matches!(
                payment.status,
                RequiresPaymentMethod | RequiresAction | Authorized
            ) {
                return Err(state_error(payment, "voided"));
            }
            payment.status = Voided;
            payment.next_action = None;
            let payment = payment.clone();
            provider.deliver(state, "payment_intent.canceled", &payment);
            Ok(payment)
        }))
    }

    fn refund(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment> {
        let call = format!("refund {id} {amount:?}");
        ready(self.once(key, call, |provider, state| {
            let payment = found(state, id)?;
            if payment.status != PaymentStatus::Captured {
                return Err(state_error(payment, "refunded"));
            }
            let left = payment.amount_captured - payment.amount_refunded;
            payment.amount_refunded += part(amount, left)?;
            if payment.amount_refunded == payment.amount_captured {
                payment.status = PaymentStatus::Refunded;
            }
            let payment = payment.clone();
            provider.deliver(state, "charge.refunded", &payment);
            Ok(payment)
        }))
    }

    fn webhook(&self, signature: &str, body: &[u8], now_secs: i64) -> Result<Event, PaymentError> {
        webhook::verify(&self.secret, signature, body, now_secs)?;
        webhook::parse(body)
    }
}

#[cfg(test)]
#[path = "test_provider_tests.rs"]
mod tests;
