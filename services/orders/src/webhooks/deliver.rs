//! The delivery loop every orders replica runs: new events from the
//! stream's consumer group, each to every endpoint at once; a failure on
//! the shared retry list (a sorted set by when it is due), taken off it
//! by exactly one replica when due.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest;
use storefront_platform::error::ServiceError;
use storefront_platform::store::{Store, StreamEntry};
use tokio_util::sync::CancellationToken;

use super::state::{self, now};
use super::{AgentHook, Settings, shown};
use crate::outbox::{CLOUDEVENT, STREAM};

/// The stream's consumer group of webhook delivery.
const GROUP: &str = "webhooks";
/// Retries by when they are due: `{endpoint}|{position}|{attempt}|{first}`.
const RETRIES: &str = "webhook-retries";
/// Attempts in all: the first and nine retries, the last about a day on.
const ATTEMPTS: u32 = 10;
const LONGEST_WAIT: Duration = Duration::from_secs(10 * 3600);
const BATCH: usize = 32;
const TICK: Duration = Duration::from_millis(250);
/// After a round that failed (the store away), before the next.
const PAUSE: Duration = Duration::from_secs(5);
const TIMEOUT: Duration = Duration::from_secs(10);
/// An entry given this long ago and not acknowledged was left by a
/// replica that stopped: past what a round takes (a batch's deliveries,
/// each within `TIMEOUT`, to every endpoint at once).
const UNACKNOWLEDGED: Duration = Duration::from_secs(BATCH as u64 * 10 + 60);

#[derive(Clone)]
pub struct Deliverer {
    store: Store,
    settings: Settings,
    client: reqwest::Client,
    /// This replica in the consumer group.
    consumer: String,
}

/// A retry as the list names it.
struct Retry<'a> {
    endpoint: &'a str,
    position: &'a str,
    attempt: u32,
    first_ms: i64,
}

impl<'a> Retry<'a> {
    fn parse(member: &'a str) -> Option<Self> {
        let mut parts = member.split('|');
        let retry = Self {
            endpoint: parts.next()?,
            position: parts.next()?,
            attempt: parts.next()?.parse().ok()?,
            first_ms: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(retry)
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// An endpoint's name on the retry list: its URL's digest, so that no
/// credential of it is stored, and a retry finds it however the list of
/// endpoints was reordered.
fn tag(url: &reqwest::Url) -> String {
    let sum = digest::digest(&digest::SHA256, url.as_str().as_bytes());
    sum.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How long after failed attempt `attempt` (from 1) the next one is due.
fn wait(first: Duration, attempt: u32) -> Duration {
    let factor = 4u32.saturating_pow(attempt.saturating_sub(1));
    first.saturating_mul(factor).min(LONGEST_WAIT)
}

impl Deliverer {
    pub fn new(store: Store, settings: Settings) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent("storefront-webhooks/1")
            .build()?;
        let consumer = std::env::var("HOSTNAME")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| format!("orders-{}", uuid::Uuid::new_v4()));
        Ok(Self {
            store,
            settings,
            client,
            consumer,
        })
    }

    pub async fn run(self, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(TICK) => {}
            }
            if let Err(e) = self.round().await {
                // The store away: one line per pause, not four a second.
                tracing::warn!(error = %e, "webhook delivery paused for {PAUSE:?}");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(PAUSE) => {}
                }
            }
        }
    }

    async fn round(&self) -> Result<(), ServiceError> {
        let mut entries = self
            .store
            .stream_read_group(STREAM, GROUP, &self.consumer, BATCH)
            .await?;
        // What a replica that stopped was given and never acknowledged.
        entries.extend(
            self.store
                .stream_claim_idle(STREAM, GROUP, &self.consumer, UNACKNOWLEDGED, BATCH)
                .await?,
        );
        let first_ms = now_ms();
        for entry in &entries {
            let Some(id) = entry.field("eventId") else {
                continue;
            };
            let id = String::from_utf8_lossy(id);
            let targets = self.targets();
            let bodies: Vec<(Target<'_>, Vec<u8>)> =
                targets.filter_map(|t| Some((t, t.body(entry)?))).collect();
            let sends = bodies.iter().map(|(target, body)| {
                let event = Event {
                    id: &id,
                    body,
                    position: &entry.id,
                };
                self.attempt(*target, event, 1, first_ms)
            });
            for sent in futures::future::join_all(sends).await {
                sent?;
            }
        }
        let ids: Vec<String> = entries.into_iter().map(|e| e.id).collect();
        self.store.stream_ack(STREAM, GROUP, &ids).await?;
        self.retries().await
    }

    /// Every endpoint: the back office's, then the agents'.
    fn targets(&self) -> impl Iterator<Item = Target<'_>> {
        let office = self.settings.endpoints.iter().map(Target::BackOffice);
        office.chain(self.settings.agents.iter().map(Target::Agent))
    }

    /// The retries due now, each taken by this replica alone.
    async fn retries(&self) -> Result<(), ServiceError> {
        let now = now_ms();
        let listed = self.store.zset_page(RETRIES, (i64::MIN, ""), BATCH).await?;
        for (member, due) in listed {
            if due > now {
                break;
            }
            if !self.store.zset_remove(RETRIES, &member).await? {
                continue;
            }
            let Some(retry) = Retry::parse(&member) else {
                continue;
            };
            let endpoint = self.targets().find(|t| tag(t.url()) == retry.endpoint);
            let Some(target) = endpoint else {
                continue; // no longer configured
            };
            let shown_url = shown(target.url());
            state::record(&self.store, &shown_url, |s| {
                s.retrying = s.retrying.saturating_sub(1)
            })
            .await;
            let entry = self.store.stream_at(STREAM, retry.position).await?;
            let fields = entry
                .as_ref()
                .and_then(|e| Some((e.field("eventId")?, target.body(e)?)));
            let Some((id, body)) = fields else {
                let gone = "the event is no longer on the stream".to_string();
                self.given_up(&shown_url, gone).await;
                continue;
            };
            let id = String::from_utf8_lossy(id);
            let event = Event {
                id: &id,
                body: &body,
                position: retry.position,
            };
            self.attempt(target, event, retry.attempt, retry.first_ms)
                .await?;
        }
        Ok(())
    }

    /// One attempt, counted; a failure goes on the retry list, or past
    /// the last attempt is given up.
    async fn attempt(
        &self,
        target: Target<'_>,
        event: Event<'_>,
        attempt: u32,
        first_ms: i64,
    ) -> Result<(), ServiceError> {
        let url = target.url();
        let shown_url = shown(url);
        let error = match self.send(target, &event).await {
            Ok(()) => {
                state::record(&self.store, &shown_url, |s| {
                    s.delivered += 1;
                    s.last_success_at = now();
                })
                .await;
                return Ok(());
            }
            Err(error) => error,
        };
        if attempt >= ATTEMPTS {
            self.given_up(&shown_url, error).await;
            return Ok(());
        }
        let due = now_ms() + wait(self.settings.first_retry, attempt).as_millis() as i64;
        let member = format!("{}|{}|{}|{first_ms}", tag(url), event.position, attempt + 1);
        self.store.zset_raise(RETRIES, &member, due).await?;
        state::record(&self.store, &shown_url, |s| {
            s.failed_attempts += 1;
            s.retrying += 1;
            s.last_failure_at = now();
            s.last_error.clone_from(&error);
        })
        .await;
        Ok(())
    }

    async fn given_up(&self, shown_url: &str, error: String) {
        tracing::warn!(url = shown_url, error, "a webhook delivery was given up");
        state::record(&self.store, shown_url, |s| {
            s.failed_attempts += 1;
            s.abandoned += 1;
            s.last_failure_at = now();
            s.last_error.clone_from(&error);
        })
        .await;
    }

    /// POSTs the event, signed; Ok on a 2xx. The error names a status or
    /// a transport failure, never the URL (it may hold a credential).
    async fn send(&self, target: Target<'_>, event: &Event<'_>) -> Result<(), String> {
        let timestamp = now_ms() / 1000;
        let request = self.client.post(target.url().clone());
        let request = match (target, &self.settings.secret) {
            (Target::BackOffice(_), Some(secret)) => request
                .header("content-type", storefront_json::events::MEDIA_TYPE)
                .header("webhook-id", event.id)
                .header("webhook-timestamp", timestamp.to_string())
                .header(
                    "webhook-signature",
                    secret.get().sign(event.id, timestamp, event.body),
                ),
            (Target::BackOffice(_), None) => return Err("no ORDER_WEBHOOK_SECRET".into()),
            (Target::Agent(hook), _) => request
                .header("content-type", "application/json")
                .header("request-id", event.id)
                .header("merchant-signature", hook.sign(timestamp, event.body)),
        };
        let sent = request.body(event.body.to_vec()).send().await;
        let mut error = match sent {
            Ok(reply) if reply.status().is_success() => return Ok(()),
            Ok(reply) => format!("answered {}", reply.status()),
            Err(e) => e.without_url().to_string(),
        };
        error.truncate(error.floor_char_boundary(200));
        Err(error)
    }
}

/// Where a delivery goes, and so what it carries.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// Every event, as its CloudEvent.
    BackOffice(&'a reqwest::Url),
    /// The events of the agent's buyers' orders, in the protocol's shape.
    Agent(&'a AgentHook),
}

impl Target<'_> {
    fn url(&self) -> &reqwest::Url {
        match self {
            Target::BackOffice(url) => url,
            Target::Agent(hook) => &hook.url,
        }
    }

    /// What this endpoint is sent of `entry`; None: nothing.
    fn body(&self, entry: &StreamEntry) -> Option<Vec<u8>> {
        match self {
            Target::BackOffice(_) => entry.field(CLOUDEVENT).map(<[u8]>::to_vec),
            Target::Agent(hook) => {
                let kind = std::str::from_utf8(entry.field("type")?).ok()?;
                hook.body(kind, entry.field("order")?)
            }
        }
    }
}

/// One event on its way.
struct Event<'a> {
    id: &'a str,
    body: &'a [u8],
    position: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_fourfold_to_ten_hours_over_about_a_day() {
        let first = Duration::from_secs(5);
        assert_eq!(wait(first, 1), first);
        assert_eq!(wait(first, 2), Duration::from_secs(20));
        let total: Duration = (1..ATTEMPTS).map(|a| wait(first, a)).sum();
        assert!(
            (20 * 3600..36 * 3600).contains(&total.as_secs()),
            "{total:?}"
        );
        assert_eq!(wait(first, 40), LONGEST_WAIT);
    }

    #[test]
    fn a_retry_reads_back_as_listed() {
        let retry = Retry::parse("0a1b|1764236400000-0|3|1764236400000").unwrap();
        assert_eq!(
            (retry.endpoint, retry.position, retry.attempt),
            ("0a1b", "1764236400000-0", 3)
        );
        assert!(Retry::parse("0a1b|1-0|3").is_none());
        assert!(Retry::parse("0a1b|1-0|x|1").is_none());
    }
}
