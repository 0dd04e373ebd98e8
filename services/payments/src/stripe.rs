//! The `stripe` provider: PaymentIntents with manual capture over Stripe's
//! HTTP API, called directly (form-encoded requests, JSON answers) with
//! the HTTP client already in the tree rather than a Stripe crate: the
//! seven calls below are all it uses. Every call that changes a payment
//! carries an `Idempotency-Key`, so a retry never charges twice. Tested
//! against localstripe, a stateful Stripe fake (`tests/e2e/payments`).

use std::time::Duration;

use serde::Deserialize;

use crate::error::PaymentError;
use crate::payment::{Money, NextAction, Payment, PaymentStatus};
use crate::provider::{Answer, PaymentProvider};
use crate::webhook::{self, Event};

/// Stripe's API.
pub const API_BASE: &str = "https://api.stripe.com";
/// How long a call to Stripe may take before the shopper is told to retry.
const TIMEOUT: Duration = Duration::from_secs(10);

use storefront_platform::secret_files::Swap;

pub struct StripeProvider {
    http: reqwest::Client,
    base: String,
    /// Replaced when their files change (`lib::follow_keys`).
    pub(crate) secret_key: Swap<String>,
    pub(crate) webhook_secret: Swap<String>,
}

#[derive(Deserialize)]
struct Intent {
    id: String,
    amount: i64,
    currency: String,
    status: String,
    #[serde(default)]
    amount_received: i64,
    client_secret: Option<String>,
    next_action: Option<serde_json::Value>,
    payment_method: Option<serde_json::Value>,
    last_payment_error: Option<StripeError>,
    #[serde(default)]
    metadata: std::collections::BTreeMap<String, String>,
    latest_charge: Option<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct StripeError {
    #[serde(rename = "type", default)]
    kind: String,
    code: Option<String>,
    decline_code: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: StripeError,
}

/// A method id as Stripe answers it: the id, or the expanded object's.
fn id_of(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(id) => Some(id.clone()),
        other => other.get("id")?.as_str().map(str::to_string),
    }
}

/// What a charge took and gave back: Stripe's `amount_captured`, or its
/// whole `amount` once `captured` (older answers, localstripe's).
fn charge_amounts(charge: &serde_json::Value) -> (i64, i64) {
    let captured = charge["amount_captured"].as_i64().or_else(|| {
        let taken = charge["captured"].as_bool().unwrap_or(false);
        if taken {
            charge["amount"].as_i64()
        } else {
            None
        }
    });
    let refunded = charge["amount_refunded"].as_i64().unwrap_or(0);
    (captured.unwrap_or(0), refunded)
}

/// The storefront's payment for Stripe's intent (`captured`, `refunded`:
/// what its charge took and gave back).
fn payment(intent: Intent, captured: i64, refunded: i64) -> Payment {
    use PaymentStatus::*;
    let status = match intent.status.as_str() {
        "requires_action" => RequiresAction,
        "requires_capture" => Authorized,
        "succeeded" if refunded > 0 && refunded >= captured => Refunded,
        "succeeded" => Captured,
        "canceled" => Voided,
        // requires_payment_method, requires_confirmation, processing.
        _ => RequiresPaymentMethod,
    };
    let next_action = intent.next_action.as_ref().map(|action| NextAction {
        kind: action["type"]
            .as_str()
            .unwrap_or("use_stripe_sdk")
            .to_string(),
        url: action["redirect_to_url"]["url"]
            .as_str()
            .map(str::to_string),
    });
    let decline_code = intent
        .last_payment_error
        .as_ref()
        .and_then(|e| e.decline_code.clone().or_else(|| e.code.clone()));
    Payment {
        id: intent.id,
        status,
        amount: Money {
            currency: intent.currency.to_ascii_uppercase(),
            amount: intent.amount,
        },
        amount_captured: captured,
        amount_refunded: refunded,
        client_secret: intent.client_secret,
        next_action: if status == RequiresAction {
            next_action
        } else {
            None
        },
        payment_method: intent.payment_method.as_ref().and_then(id_of),
        decline_code,
        reference: intent
            .metadata
            .get("reference")
            .cloned()
            .unwrap_or_default(),
    }
}

/// What a refused call means to the storefront.
fn refusal(status: reqwest::StatusCode, body: &[u8]) -> PaymentError {
    let error = serde_json::from_slice::<ErrorBody>(body)
        .map(|b| b.error)
        .unwrap_or_default();
    if status.as_u16() == 402 || error.kind == "card_error" {
        let code = error
            .decline_code
            .or(error.code)
            .unwrap_or_else(|| "card_declined".into());
        return PaymentError::Declined { decline_code: code };
    }
    if status.is_server_error() || status.as_u16() == 429 {
        return PaymentError::Unavailable(format!("Stripe answered {status}"));
    }
    if status.as_u16() == 404 {
        return PaymentError::NotFound(error.message.unwrap_or_default());
    }
    // Stripe's own words, bounded: they describe our request, not secrets.
    let message: String = error
        .message
        .unwrap_or_else(|| format!("Stripe refused the request ({status})"))
        .chars()
        .take(200)
        .collect();
    PaymentError::State(message)
}

/// Stripe's shared payment tokens, granted to the shop by an agent.
const SHARED_TOKEN_PREFIX: &str = "spt_";

impl StripeProvider {
    pub fn new(base: &str, secret_key: &str, webhook_secret: &str) -> Self {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .unwrap_or_default();
        Self {
            http,
            base: base.trim_end_matches('/').to_string(),
            secret_key: Swap::new(secret_key.to_string()),
            webhook_secret: Swap::new(webhook_secret.to_string()),
        }
    }

    /// One call: `form` posted (or a GET without one), under `key`.
    async fn call(
        &self,
        path: &str,
        form: Option<&[(&str, String)]>,
        key: Option<&str>,
    ) -> Result<Vec<u8>, PaymentError> {
        let url = format!("{}{path}", self.base);
        let request = match form {
            Some(form) => self.http.post(url).form(form),
            None => self.http.get(url),
        };
        let mut request = request.bearer_auth(self.secret_key.get());
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let unavailable = |e: reqwest::Error| {
            // Never the URL's query or any header: only what failed.
            let what = if e.is_timeout() {
                "timed out"
            } else {
                "unreachable"
            };
            PaymentError::Unavailable(format!("Stripe {what}"))
        };
        let response = request.send().await.map_err(unavailable)?;
        let status = response.status();
        let body = response.bytes().await.map_err(unavailable)?;
        if !status.is_success() {
            return Err(refusal(status, &body));
        }
        Ok(body.to_vec())
    }

    async fn intent(
        &self,
        path: &str,
        form: Option<&[(&str, String)]>,
        key: Option<&str>,
    ) -> Result<Payment, PaymentError> {
        let body = self.call(path, form, key).await?;
        let intent: Intent = serde_json::from_slice(&body).map_err(|_| {
            PaymentError::Unavailable("Stripe answered an unreadable intent".into())
        })?;
        // Only a captured payment's charge says more than the intent does.
        let (captured, refunded) = match &intent.latest_charge {
            _ if intent.status != "succeeded" => (0, 0),
            Some(serde_json::Value::String(charge)) => charge_amounts(&self.charge(charge).await?),
            Some(charge) => charge_amounts(charge),
            None => (intent.amount_received, 0),
        };
        Ok(payment(intent, captured, refunded))
    }

    async fn charge(&self, id: &str) -> Result<serde_json::Value, PaymentError> {
        let body = self
            .call(&format!("/v1/charges/{}", path_id(id)?), None, None)
            .await?;
        serde_json::from_slice(&body)
            .map_err(|_| PaymentError::Unavailable("Stripe answered an unreadable charge".into()))
    }

    async fn confirm_with(
        &self,
        id: &str,
        method: &str,
        key: &str,
    ) -> Result<Payment, PaymentError> {
        check_method(method)?;
        let path = format!("/v1/payment_intents/{}", path_id(id)?);
        if method.starts_with(SHARED_TOKEN_PREFIX) {
            // An agent's shared payment token (the Agentic Commerce
            // Protocol's delegated payment): Stripe takes it as the
            // confirm's `payment_method_data[shared_payment_granted_token]`.
            let confirm = [(
                "payment_method_data[shared_payment_granted_token]",
                method.to_string(),
            )];
            return self
                .intent(&format!("{path}/confirm"), Some(&confirm), Some(key))
                .await;
        }
        let update = [("payment_method", method.to_string())];
        self.intent(&path, Some(&update), Some(&format!("{key}-method")))
            .await?;
        self.intent(&format!("{path}/confirm"), Some(&[]), Some(key))
            .await
    }
}

/// A payment id as a path segment: Stripe's ids are `pi_` and letters.
fn path_id(id: &str) -> Result<&str, PaymentError> {
    let ok = id.len() <= 255 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok && !id.is_empty() {
        Ok(id)
    } else {
        Err(PaymentError::Invalid("not a payment id".into()))
    }
}

fn check_method(method: &str) -> Result<(), PaymentError> {
    let max = crate::test_provider::MAX_METHOD_CHARS;
    if method.is_empty() || method.chars().count() > max {
        return Err(PaymentError::Invalid(format!(
            "a payment method is 1 to {max} characters"
        )));
    }
    Ok(())
}

fn amount_form(amount: Option<i64>, name: &'static str) -> Vec<(&'static str, String)> {
    amount.map(|a| (name, a.to_string())).into_iter().collect()
}

impl PaymentProvider for StripeProvider {
    fn name(&self) -> &'static str {
        "stripe"
    }

    fn create(
        &self,
        amount: Money,
        reference: &str,
        key: &str,
        method: Option<&str>,
    ) -> Answer<'_, Payment> {
        let reference = reference.to_string();
        let key = key.to_string();
        let method = method.map(str::to_string);
        Box::pin(async move {
            let form = [
                ("amount", amount.amount.to_string()),
                ("currency", amount.currency.to_ascii_lowercase()),
                ("capture_method", "manual".to_string()),
                ("metadata[reference]", reference),
            ];
            let created = self
                .intent("/v1/payment_intents", Some(&form), Some(&key))
                .await?;
            match method {
                Some(method) => {
                    self.confirm_with(&created.id, &method, &format!("{key}-confirm"))
                        .await
                }
                None => Ok(created),
            }
        })
    }

    fn confirm(&self, id: &str, method: &str, key: &str) -> Answer<'_, Payment> {
        let (id, method, key) = (id.to_string(), method.to_string(), key.to_string());
        Box::pin(async move { self.confirm_with(&id, &method, &key).await })
    }

    fn get(&self, id: &str) -> Answer<'_, Payment> {
        let id = id.to_string();
        Box::pin(async move {
            let path = format!("/v1/payment_intents/{}", path_id(&id)?);
            self.intent(&path, None, None).await
        })
    }

    fn capture(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment> {
        let (id, key) = (id.to_string(), key.to_string());
        Box::pin(async move {
            let path = format!("/v1/payment_intents/{}/capture", path_id(&id)?);
            let form = amount_form(amount, "amount_to_capture");
            self.intent(&path, Some(&form), Some(&key)).await
        })
    }

    fn void(&self, id: &str, key: &str) -> Answer<'_, Payment> {
        let (id, key) = (id.to_string(), key.to_string());
        Box::pin(async move {
            let path = format!("/v1/payment_intents/{}/cancel", path_id(&id)?);
            self.intent(&path, Some(&[]), Some(&key)).await
        })
    }

    fn refund(&self, id: &str, amount: Option<i64>, key: &str) -> Answer<'_, Payment> {
        let (id, key) = (id.to_string(), key.to_string());
        Box::pin(async move {
            let id = path_id(&id)?;
            // What is left, named: a refund without an amount is the
            // whole charge to some Stripe fakes, not what remains of it.
            let amount = match amount {
                Some(amount) => amount,
                None => {
                    let path = format!("/v1/payment_intents/{id}");
                    let now = self.intent(&path, None, None).await?;
                    let left = now.amount_captured - now.amount_refunded;
                    if left < 1 {
                        return Err(PaymentError::State("nothing left to refund".into()));
                    }
                    left
                }
            };
            let mut form = vec![("payment_intent", id.to_string())];
            form.extend(amount_form(Some(amount), "amount"));
            self.call("/v1/refunds", Some(&form), Some(&key)).await?;
            self.intent(&format!("/v1/payment_intents/{id}"), None, None)
                .await
        })
    }

    fn webhook(&self, signature: &str, body: &[u8], now_secs: i64) -> Result<Event, PaymentError> {
        webhook::verify(&self.webhook_secret.get(), signature, body, now_secs)?;
        webhook::parse(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intent(status: &str) -> Intent {
        serde_json::from_value(serde_json::json!({
            "id": "pi_1", "amount": 4995, "currency": "aud", "status": status,
            "amount_received": if status == "succeeded" { 4995 } else { 0 },
            "client_secret": "pi_1_secret_x",
            "next_action": {"type": "redirect_to_url", "redirect_to_url": {"url": "https://hooks.stripe.com/3ds"}},
            "payment_method": "pm_1",
            "metadata": {"reference": "cs-1"},
        }))
        .expect("an intent")
    }

    #[test]
    fn stripe_statuses_read_as_the_storefront_s() {
        use PaymentStatus::*;
        for (stripe, ours) in [
            ("requires_payment_method", RequiresPaymentMethod),
            ("requires_confirmation", RequiresPaymentMethod),
            ("requires_action", RequiresAction),
            ("requires_capture", Authorized),
            ("succeeded", Captured),
            ("canceled", Voided),
        ] {
            assert_eq!(payment(intent(stripe), 0, 0).status, ours, "{stripe}");
        }
        assert_eq!(payment(intent("succeeded"), 4995, 4995).status, Refunded);
        assert_eq!(payment(intent("succeeded"), 4995, 100).status, Captured);
        let charge = serde_json::json!({"amount": 4995, "captured": true, "amount_refunded": 10});
        assert_eq!(charge_amounts(&charge), (4995, 10));
        let charge = serde_json::json!({"amount": 4995, "amount_captured": 2000});
        assert_eq!(charge_amounts(&charge), (2000, 0));
        let action = payment(intent("requires_action"), 0, 0);
        let next = action.next_action.expect("a next action");
        assert_eq!(next.url.as_deref(), Some("https://hooks.stripe.com/3ds"));
        assert_eq!(action.reference, "cs-1");
        assert_eq!(action.amount.currency, "AUD");
    }

    #[test]
    fn refusals_read_as_declines_outages_and_states() {
        let declined = br#"{"error":{"type":"card_error","code":"card_declined","decline_code":"generic_decline"}}"#;
        assert_eq!(
            refusal(reqwest::StatusCode::PAYMENT_REQUIRED, declined),
            PaymentError::Declined {
                decline_code: "generic_decline".into()
            }
        );
        assert!(matches!(
            refusal(reqwest::StatusCode::BAD_GATEWAY, b""),
            PaymentError::Unavailable(_)
        ));
        assert!(matches!(
            refusal(reqwest::StatusCode::TOO_MANY_REQUESTS, b"{}"),
            PaymentError::Unavailable(_)
        ));
        assert!(matches!(
            refusal(reqwest::StatusCode::BAD_REQUEST, b"not json"),
            PaymentError::State(_)
        ));
        assert!(path_id("pi_123").is_ok());
        assert!(path_id("../v1/charges").is_err());
        assert!(path_id("").is_err());
    }
}
