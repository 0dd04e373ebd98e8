//! Order events delivered to the back office's webhooks
//! (`ORDER_WEBHOOK_URLS`): each event, a CloudEvent in JSON (structured
//! mode, `application/cloudevents+json`), POSTed to every endpoint and
//! signed per Standard Webhooks (`webhook-id` the event's id, so a
//! receiver skips what it has seen; `webhook-timestamp`;
//! `webhook-signature` under `ORDER_WEBHOOK_SECRET`). A failed delivery
//! (no 2xx within 10 s) is retried with exponential backoff, from
//! `ORDER_WEBHOOK_FIRST_RETRY_MS` (5 s) four times longer each time, ten
//! attempts in all over about a day; then it is given up and counted.
//! Every orders replica delivers: new events come to one of them through
//! the stream's consumer group `webhooks`, and a retry is taken from the
//! shared list by exactly one.
//!
//! The same loop sends an agent (`ACP_AGENTS` with a `webhookUrl`) the
//! events of the orders its buyers placed, in the Agentic Commerce
//! Protocol's shape and signature (`agent_hook`).

mod agent_hook;
mod deliver;
mod sign;
mod state;

use std::time::Duration;

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::secret_files::{Followed, Swap};

pub use agent_hook::AgentHook;
pub use deliver::Deliverer;
pub use sign::Secret;
pub use state::list as deliveries;
use storefront_platform::agents::Agents;

/// Endpoints at most.
const MAX_ENDPOINTS: usize = 10;

/// The webhooks' settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The back office's, each sent every event (Standard Webhooks).
    pub endpoints: Vec<reqwest::Url>,
    pub secret: Option<Swap<Secret>>,
    /// Where it was read from: a file is followed (`follow_secret`).
    pub secret_source: Option<storefront_platform::env::Secret>,
    /// The agents', each sent its buyers' orders' events.
    pub agents: Vec<AgentHook>,
    pub first_retry: Duration,
}

impl Settings {
    /// None without `ORDER_WEBHOOK_URLS` and without an agent's webhook.
    /// Deployed shops (`https_only`) deliver over https alone.
    pub fn from_env(env: &EnvReader, https_only: bool) -> Result<Option<Self>, ConfigError> {
        let environment = env.environment()?;
        let agents = Agents::from_env(env, environment)?;
        let deployed = environment.refuses_dev_shortcuts() && !agents.is_empty();
        let order_url = storefront_platform::agents::order_url(env, deployed)?;
        let hooks = AgentHook::all(&agents, &order_url)?;
        let endpoints = Self::endpoints(env, https_only)?;
        if endpoints.is_empty() && hooks.is_empty() {
            return Ok(None);
        }
        const SECRET: &str = "ORDER_WEBHOOK_SECRET";
        let secret_source = match env.secret(SECRET)? {
            _ if endpoints.is_empty() => None,
            None => return Err(ConfigError::new(SECRET, "required with ORDER_WEBHOOK_URLS")),
            Some(s) => Some(s),
        };
        let secret = secret_source
            .as_ref()
            .map(|s| Secret::parse(s.expose()).map(Swap::new))
            .transpose()
            .map_err(|m| ConfigError::new(SECRET, m))?;
        const FIRST: &str = "ORDER_WEBHOOK_FIRST_RETRY_MS";
        let first_retry = env.millis(FIRST, 5_000)?;
        if !(Duration::from_millis(100)..=Duration::from_secs(600)).contains(&first_retry) {
            return Err(ConfigError::new(FIRST, "100 to 600000"));
        }
        Ok(Some(Self {
            endpoints,
            secret,
            secret_source,
            agents: hooks,
            first_retry,
        }))
    }

    /// The signing secret's file, when it came from one: a rotated secret
    /// signs the next delivery (one that is not `whsec_...` is refused,
    /// the last one kept).
    pub fn follow_secret(&self) -> Option<Followed> {
        let (source, swap) = (self.secret_source.as_ref()?, self.secret.clone()?);
        let take = move |text: &str| {
            swap.set(Secret::parse(text)?);
            Ok(())
        };
        Followed::of("ORDER_WEBHOOK_SECRET", source, Box::new(take))
    }

    /// `ORDER_WEBHOOK_URLS`: http(s) URLs, comma-separated, 10 at most.
    fn endpoints(env: &EnvReader, https_only: bool) -> Result<Vec<reqwest::Url>, ConfigError> {
        const URLS: &str = "ORDER_WEBHOOK_URLS";
        let raw = env.string(URLS, "");
        let listed: Vec<&str> = raw
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        if listed.len() > MAX_ENDPOINTS {
            return Err(ConfigError::new(URLS, "at most 10 endpoints"));
        }
        let mut endpoints = Vec::new();
        for url in listed {
            let parsed = reqwest::Url::parse(url)
                .ok()
                .filter(|u| matches!(u.scheme(), "https" | "http") && u.host().is_some())
                .ok_or_else(|| ConfigError::new(URLS, "each an http(s) URL, comma-separated"))?;
            if https_only && parsed.scheme() != "https" {
                return Err(ConfigError::new(
                    URLS,
                    "https only outside local and development",
                ));
            }
            endpoints.push(parsed);
        }
        Ok(endpoints)
    }
}

/// An endpoint as the delivery state shows it: no query, no credentials.
pub fn shown(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    fn settings(pairs: &[(&str, &str)], https_only: bool) -> Result<Option<Settings>, String> {
        let env = EnvReader::from_pairs(pairs.iter().copied());
        Settings::from_env(&env, https_only).map_err(|e| e.var)
    }

    #[test]
    fn endpoints_need_a_secret_and_https_where_deployed() {
        assert!(settings(&[], true).unwrap().is_none());
        let one = [("ORDER_WEBHOOK_URLS", "http://127.0.0.1:9/hook")];
        assert_eq!(
            settings(&one, false).err(),
            Some("ORDER_WEBHOOK_SECRET".into())
        );
        let with = [one[0], ("ORDER_WEBHOOK_SECRET", SECRET)];
        assert_eq!(settings(&with, false).unwrap().unwrap().endpoints.len(), 1);
        assert_eq!(
            settings(&with, true).err(),
            Some("ORDER_WEBHOOK_URLS".into())
        );
        let bad = [
            ("ORDER_WEBHOOK_URLS", "ftp://x"),
            ("ORDER_WEBHOOK_SECRET", SECRET),
        ];
        assert_eq!(
            settings(&bad, false).err(),
            Some("ORDER_WEBHOOK_URLS".into())
        );
    }

    #[test]
    fn an_endpoint_is_shown_without_its_credentials() {
        let url = reqwest::Url::parse("https://u:p@erp.example.com/hooks?token=s3cret").unwrap();
        assert_eq!(shown(&url), "https://erp.example.com/hooks");
    }
}
