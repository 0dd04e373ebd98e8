//! An agent's order webhook (the Agentic Commerce Protocol's
//! `openapi.agentic_checkout_webhook.yaml`): `{"type": "order_create" |
//! "order_update", "data": <the order>}`, the order as the protocol's
//! `Order` (its checkout session's id, its permalink, its status and
//! totals), signed in `Merchant-Signature: t=<unix seconds>,v1=<hex>`, the
//! HMAC-SHA256 of `{t}.{body}` under the agent's signing secret.

use aws_lc_rs::hmac;
use prost::Message;
use serde_json::json;
use storefront_platform::agents::{self, Agents};
use storefront_platform::env::ConfigError;
use storefront_proto::common::v1::Money;
use storefront_proto::names::order_status;
use storefront_proto::orders::v1::Order;

/// One agent's webhook.
#[derive(Clone)]
pub struct AgentHook {
    pub agent: String,
    pub url: reqwest::Url,
    key: hmac::Key,
    /// `ACP_ORDER_URL`.
    order_url: String,
}

impl std::fmt::Debug for AgentHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AgentHook({})", self.agent)
    }
}

impl AgentHook {
    /// Every registered agent's with a webhook URL (the registry holds
    /// them to a signing secret and, deployed, to https).
    pub fn all(agents: &Agents, order_url: &str) -> Result<Vec<AgentHook>, ConfigError> {
        let mut hooks = Vec::new();
        for agent in agents.with_webhooks() {
            let (Some(url), Some(secret)) = (&agent.webhook_url, &agent.signing_secret) else {
                continue;
            };
            let url = reqwest::Url::parse(url).map_err(|_| {
                ConfigError::new(
                    "ACP_AGENTS",
                    format!("{}: webhookUrl is not a URL", agent.id),
                )
            })?;
            hooks.push(AgentHook {
                agent: agent.id.clone(),
                url,
                key: hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()),
                order_url: order_url.to_string(),
            });
        }
        Ok(hooks)
    }

    /// The `Merchant-Signature` of `body` at `timestamp`.
    pub fn sign(&self, timestamp: i64, body: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.key);
        context.update(timestamp.to_string().as_bytes());
        context.update(b".");
        context.update(body);
        let hex: String = context
            .sign()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("t={timestamp},v1={hex}")
    }

    /// The event of stream kind `kind` about `order` (protobuf), if the
    /// order is one this agent's buyers placed.
    pub fn body(&self, kind: &str, order: &[u8]) -> Option<Vec<u8>> {
        let order = Order::decode(order).ok()?;
        let (agent, nonce) = agents::buyer_of(&order.customer_id)?;
        if agent != self.agent {
            return None;
        }
        let id = order
            .meta
            .as_ref()
            .map(|m| m.id.clone())
            .unwrap_or_default();
        let cents = |m: &Option<Money>| m.as_ref().map_or(0, |m| m.cent_amount);
        let t = order.totals.clone().unwrap_or_default();
        let total = |kind: &str, text: &str, amount: i64| json!({"type": kind, "display_text": text, "amount": amount});
        let event = json!({
            "type": if kind == "order.created" { "order_create" } else { "order_update" },
            "data": {
                "type": "order",
                "id": id,
                "checkout_session_id": agents::session_id(nonce, &order.cart_id),
                "order_number": order.order_number,
                "permalink_url": self.order_url.replace("{orderId}", &id),
                "status": order_status(order.status).to_ascii_lowercase(),
                "totals": [
                    total("subtotal", "Subtotal", cents(&t.subtotal) - cents(&t.discount)),
                    total("fulfillment", "Shipping", cents(&t.shipping)),
                    total("tax", "Tax", cents(&t.tax)),
                    total("total", "Total", cents(&t.total)),
                ],
            }
        });
        serde_json::to_vec(&event).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_timestamp_and_body_in_hex() {
        let hook = AgentHook {
            agent: "a".into(),
            url: reqwest::Url::parse("https://agent.example/hooks").unwrap(),
            key: hmac::Key::new(hmac::HMAC_SHA256, b"secret"),
            order_url: "https://shop.example/orders/{orderId}".into(),
        };
        let signed = hook.sign(1_709_123_456, b"{}");
        let expected = hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA256, b"secret"),
            b"1709123456.{}",
        );
        let hex: String = expected
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(signed, format!("t=1709123456,v1={hex}"));
    }
}
