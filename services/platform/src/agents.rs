//! The agents allowed to shop through the Agentic Commerce Protocol facade
//! (docs/agents.md), from `ACP_AGENTS`: each an id, the SHA-256 of its API
//! key (the key itself is never configured: a leaked configuration gives
//! no way in), an optional signing secret and whether it must sign, its
//! webhook URL, and the markets it may sell in. Local and development add
//! the demo agent; production and staging add none, and refuse an agent
//! that declares signing without a secret or a webhook over plain HTTP.
//! The gateway serves them; the orders service sends their webhooks. Both
//! name an agent's buyers and sessions as [`buyer_id`] and
//! [`session_id`] say.

use std::collections::HashMap;
use std::sync::Arc;

use aws_lc_rs::digest::{SHA256, digest};
use serde::Deserialize;

use crate::env::{AppEnvironment, ConfigError, EnvReader};

/// The demo agent's key, in docs/agents.md like the demo customers'
/// passwords: local and development only.
pub const DEMO_KEY: &str = "acp_demo_local_key";
pub const DEMO_ID: &str = "demo-agent";
/// Its signing secret (it may sign; it need not).
pub const DEMO_SIGNING_SECRET: &str = "acp_demo_signing_secret";
/// What one `ACP_AGENTS` may hold.
const MAX_AGENTS: usize = 1_000;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Declared {
    id: String,
    key_sha256: String,
    #[serde(default)]
    signing_secret: Option<String>,
    #[serde(default)]
    signs: bool,
    #[serde(default)]
    webhook_url: Option<String>,
    #[serde(default)]
    markets: Vec<String>,
}

/// One registered agent.
#[derive(Debug, Clone)]
pub struct Agent {
    pub id: String,
    pub signing_secret: Option<String>,
    /// Every request must carry a valid `Signature` and a fresh `Timestamp`.
    pub signs: bool,
    pub webhook_url: Option<String>,
    /// Market ids it may sell in; empty: every market.
    pub markets: Vec<String>,
}

/// The agents by the SHA-256 of their key.
#[derive(Debug, Clone, Default)]
pub struct Agents {
    by_key: HashMap<[u8; 32], Arc<Agent>>,
}

/// The guest who buys through one session of `agent`'s: `guest-` so that
/// the cart and checkout treat it as a guest (its checkout time, its hold
/// limits).
pub fn buyer_id(agent: &str, nonce: &str) -> String {
    format!("guest-acp-{agent}-{nonce}")
}

/// The agent and nonce of a buyer id, if it is an agent's buyer.
pub fn buyer_of(customer_id: &str) -> Option<(&str, &str)> {
    let rest = customer_id.strip_prefix("guest-acp-")?;
    let (agent, nonce) = rest.rsplit_once('-')?;
    (!agent.is_empty() && is_nonce(nonce)).then_some((agent, nonce))
}

/// A session's id: the nonce of its buyer and its cart.
pub fn session_id(nonce: &str, cart_id: &str) -> String {
    format!("cs_{nonce}_{cart_id}")
}

/// The nonce and cart id of a session id.
pub fn session_of(id: &str) -> Option<(&str, &str)> {
    let (nonce, cart_id) = id.strip_prefix("cs_")?.split_once('_')?;
    (is_nonce(nonce) && !cart_id.is_empty()).then_some((nonce, cart_id))
}

/// 32 hex digits (a simple UUID).
fn is_nonce(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `ACP_ORDER_URL`: the buyer's page of an order, `{orderId}` replaced;
/// https where deployed with agents.
pub fn order_url(env: &EnvReader, deployed_with_agents: bool) -> Result<String, ConfigError> {
    const VAR: &str = "ACP_ORDER_URL";
    let url = env.string(VAR, "http://127.0.0.1:8080/orders/{orderId}");
    let https =
        url.starts_with("https://") || (!deployed_with_agents && url.starts_with("http://"));
    if !https {
        return Err(ConfigError::new(VAR, "must be an https:// URL"));
    }
    if !url.contains("{orderId}") {
        return Err(ConfigError::new(VAR, "must contain {orderId}"));
    }
    Ok(url)
}

fn sha256(key: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest(&SHA256, key.as_bytes()).as_ref());
    out
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn refused(message: impl Into<String>) -> ConfigError {
    ConfigError::new("ACP_AGENTS", message)
}

impl Agents {
    pub fn from_env(env: &EnvReader, environment: AppEnvironment) -> Result<Self, ConfigError> {
        let text = env.string("ACP_AGENTS", "[]");
        let declared: Vec<Declared> = serde_json::from_str(&text)
            .map_err(|e| refused(format!("a JSON list of agents: {e}")))?;
        if declared.len() > MAX_AGENTS {
            return Err(refused(format!("at most {MAX_AGENTS} agents")));
        }
        let mut agents = Agents::default();
        if !environment.refuses_dev_shortcuts() {
            agents.insert(sha256(DEMO_KEY), Agent::demo())?;
        }
        for d in declared {
            let key = from_hex(&d.key_sha256.to_ascii_lowercase())
                .ok_or_else(|| refused(format!("{}: keySha256 must be 64 hex digits", d.id)))?;
            let agent = Agent::checked(d, environment)?;
            agents.insert(key, agent)?;
        }
        Ok(agents)
    }

    fn insert(&mut self, key: [u8; 32], agent: Agent) -> Result<(), ConfigError> {
        if self.by_key.values().any(|a| a.id == agent.id) {
            return Err(refused(format!(
                "{}: a second agent with this id",
                agent.id
            )));
        }
        if self.by_key.insert(key, Arc::new(agent)).is_some() {
            return Err(refused("two agents with the same key"));
        }
        Ok(())
    }

    /// The agent whose key this is.
    pub fn by_key(&self, key: &str) -> Option<Arc<Agent>> {
        self.by_key.get(&sha256(key)).cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Every agent with a webhook URL.
    pub fn with_webhooks(&self) -> impl Iterator<Item = &Arc<Agent>> {
        self.by_key.values().filter(|a| a.webhook_url.is_some())
    }
}

impl Agent {
    fn demo() -> Agent {
        Agent {
            id: DEMO_ID.into(),
            signing_secret: Some(DEMO_SIGNING_SECRET.into()),
            signs: false,
            webhook_url: None,
            markets: Vec::new(),
        }
    }

    fn checked(d: Declared, environment: AppEnvironment) -> Result<Agent, ConfigError> {
        let id_ok = !d.id.is_empty()
            && d.id.len() <= 64
            && d.id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !id_ok {
            return Err(refused(
                "an agent id is 1 to 64 letters, digits, '-' or '_'",
            ));
        }
        let secret = d.signing_secret.filter(|s| !s.is_empty());
        if d.signs && secret.is_none() {
            return Err(refused(format!(
                "{}: signs is true but no signingSecret is given",
                d.id
            )));
        }
        if d.webhook_url.is_some() && secret.is_none() {
            return Err(refused(format!(
                "{}: a webhookUrl needs the signingSecret its deliveries are signed with",
                d.id
            )));
        }
        if let Some(url) = &d.webhook_url {
            let https = url.starts_with("https://");
            if !https && (environment.refuses_dev_shortcuts() || !url.starts_with("http://")) {
                return Err(refused(format!(
                    "{}: webhookUrl must be an https:// URL",
                    d.id
                )));
            }
        }
        Ok(Agent {
            id: d.id,
            signing_secret: secret,
            signs: d.signs,
            webhook_url: d.webhook_url,
            markets: d.markets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(agents: &str) -> EnvReader {
        EnvReader::from_pairs([("ACP_AGENTS", agents)])
    }

    #[test]
    fn keys_are_found_by_their_hash_and_dev_seeds_the_demo_agent() {
        let hash: String = sha256("k1").iter().map(|b| format!("{b:02x}")).collect();
        let list = format!(r#"[{{"id":"shop-agent","keySha256":"{hash}"}}]"#);
        let agents = Agents::from_env(&env(&list), AppEnvironment::Development).unwrap();
        assert_eq!(agents.by_key("k1").unwrap().id, "shop-agent");
        assert_eq!(agents.by_key(DEMO_KEY).unwrap().id, DEMO_ID);
        assert!(agents.by_key("k2").is_none());
        let production = Agents::from_env(&env(&list), AppEnvironment::Production).unwrap();
        assert!(production.by_key(DEMO_KEY).is_none());
    }

    #[test]
    fn buyers_and_sessions_name_their_agent_nonce_and_cart() {
        let nonce = "0123456789abcdef0123456789abcdef";
        let buyer = buyer_id("shop-agent", nonce);
        assert_eq!(buyer_of(&buyer), Some(("shop-agent", nonce)));
        assert_eq!(buyer_of("guest-1234"), None);
        let id = session_id(nonce, "c-1_2");
        assert_eq!(session_of(&id), Some((nonce, "c-1_2")));
        assert_eq!(session_of("cs_nope"), None);
    }

    #[test]
    fn production_refuses_signing_without_a_secret_and_plain_http() {
        let hash = "ab".repeat(32);
        for bad in [
            format!(r#"[{{"id":"a","keySha256":"{hash}","signs":true}}]"#),
            format!(r#"[{{"id":"a","keySha256":"{hash}","webhookUrl":"http://agent.example/h"}}]"#),
            format!(r#"[{{"id":"a b","keySha256":"{hash}"}}]"#),
            r#"[{"id":"a","keySha256":"abc"}]"#.to_string(),
        ] {
            let e = Agents::from_env(&env(&bad), AppEnvironment::Production).unwrap_err();
            assert_eq!(e.var, "ACP_AGENTS", "{bad}");
        }
    }
}
