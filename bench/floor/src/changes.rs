//! The change load of `bench/catalog_changes.sh`: stock and price changes
//! at fixed rates on the internal port while wrk drives the public routes,
//! and how long each price change takes to show in search.
//!
//! Usage: `changes FEED INTERNAL_URL PUBLIC_URL TOKEN [SECONDS] [STOCK/s]
//! [PRICES/s]`. Each stock change is its own request (`POST
//! /internal/catalog/stock`, one SKU set to a new quantity); each price
//! change `PUT`s a product of the feed (a different one each time while
//! there are more products than changes) with new prices and one new word
//! in its name; one watcher asks `GET /search?query=WORD` for each change
//! in turn until the product is among the results: the delay from the
//! `PUT`'s answer to that is the change's delay to search. Prints one JSON
//! summary on stdout. With `CHANGES_READY=<path>` it makes that file once
//! it has read the feed and starts sending.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// A product of the feed, as `PUT /internal/catalog/products/{id}` takes
/// it: its id, its first SKU and the record without what the route does
/// not take.
struct Record {
    id: String,
    sku: String,
    body: Value,
}

/// The product lines of the feed, kept as text and read when changed, so
/// that the load starts at once and costs what a change costs.
fn products(feed: &str) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(feed).with_context(|| feed.to_string())?;
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains(r#""type":"product""#))
        .map(str::to_string)
        .collect();
    anyhow::ensure!(!lines.is_empty(), "no products in {feed}");
    Ok(lines)
}

fn record(line: &str) -> anyhow::Result<Record> {
    let mut body: Value = serde_json::from_str(line)?;
    let object = body.as_object_mut().context("a product is an object")?;
    let id = object
        .remove("id")
        .and_then(|v| v.as_str().map(str::to_string));
    // The feed's version would make every PUT after the first a 409.
    for field in ["type", "version", "lastModifiedAt"] {
        object.remove(field);
    }
    let sku = body["variants"][0]["sku"].as_str().map(str::to_string);
    match (id, sku) {
        (Some(id), Some(sku)) => Ok(Record { id, sku, body }),
        _ => anyhow::bail!("a product without an id or a SKU"),
    }
}

/// How often search is asked whether it found a changed product yet: the
/// delays are measured to within this, and the polling is search load the
/// routes under wrk share.
const POLL_MS: u64 = 50;

#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    failed: AtomicU64,
}

struct Load {
    http: reqwest::Client,
    internal: String,
    public: String,
    token: String,
    stock: Counts,
    prices: Counts,
}

impl Load {
    async fn stock(&self, sku: &str, quantity: u64) {
        let body = json!({"changes": [{"sku": sku, "quantity": quantity}]});
        let url = format!("{}/internal/catalog/stock", self.internal);
        let sent = self.http.post(url).bearer_auth(&self.token).json(&body);
        count(&self.stock, sent.send().await).await;
    }

    async fn price(&self, record: Record, n: u64, watched: UnboundedSender<Pending>) {
        let word = word(n);
        let mut body = record.body;
        let name = body["name"]["en-AU"].as_str().unwrap_or("Product");
        body["name"]["en-AU"] = json!(format!("{name} {word}"));
        for variant in body["variants"].as_array_mut().into_iter().flatten() {
            for price in variant["prices"].as_array_mut().into_iter().flatten() {
                price["centAmount"] = json!(1_000 + n % 50_000);
            }
        }
        let url = format!("{}/internal/catalog/products/{}", self.internal, record.id);
        let sent = self.http.put(url).bearer_auth(&self.token).json(&body);
        if !count(&self.prices, sent.send().await).await {
            return;
        }
        let pending = Pending {
            word,
            id: record.id,
            answered: Instant::now(),
        };
        let _ = watched.send(pending);
    }

    /// Whether search finds the product of `change` by its word.
    async fn found(&self, change: &Pending) -> bool {
        let search = format!("{}/search?query={}&limit=20", self.public, change.word);
        let found = self
            .http
            .get(&search)
            .header("X-Api-Version", "v1.0")
            .send()
            .await;
        if let Ok(reply) = found
            && let Ok(page) = reply.json::<Value>().await
        {
            let results = page["results"].as_array();
            return results.is_some_and(|r| r.iter().any(|p| p["id"] == change.id.as_str()));
        }
        false
    }
}

/// A price change answered, not yet found by search.
struct Pending {
    word: String,
    id: String,
    answered: Instant,
}

/// Asks search for each change in the order they were answered, the oldest
/// first, every `POLL_MS` until it is found; then at once for the next
/// (search takes changes up in catalog order: changes made before one it
/// has found are usually found too). One request at a time, so the polling
/// adds little search load. Returns the delays (ms) and how many were not
/// found within 10 s.
async fn watch(load: Arc<Load>, mut queue: UnboundedReceiver<Pending>) -> (Vec<u64>, u64) {
    let (mut delays, mut unseen) = (Vec::new(), 0);
    while let Some(change) = queue.recv().await {
        loop {
            if load.found(&change).await {
                delays.push(change.answered.elapsed().as_millis() as u64);
                break;
            }
            if change.answered.elapsed() > Duration::from_secs(10) {
                unseen += 1;
                break;
            }
            tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
        }
    }
    (delays, unseen)
}

/// A word no product has, one per change: letters only, so that no
/// tokenizer splits it.
fn word(mut n: u64) -> String {
    let mut word = String::from("zq");
    for _ in 0..5 {
        word.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    word
}

/// Counts a change; whether it was applied.
async fn count(counts: &Counts, reply: reqwest::Result<reqwest::Response>) -> bool {
    counts.sent.fetch_add(1, Ordering::Relaxed);
    match reply {
        Ok(r) if r.status().is_success() => true,
        Ok(r) => {
            let status = r.status();
            let text = r.text().await.unwrap_or_default();
            eprintln!("change refused: {status} {}", &text[..text.len().min(300)]);
            counts.failed.fetch_add(1, Ordering::Relaxed);
            false
        }
        Err(e) => {
            eprintln!("change failed: {e}");
            counts.failed.fetch_add(1, Ordering::Relaxed);
            false
        }
    }
}

/// Runs `each` `per_second` times a second for `seconds`, each call on its
/// own task so that a slow answer never slows the schedule.
async fn at_rate<F, Fut>(seconds: u64, per_second: u64, each: F)
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    if per_second == 0 {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / per_second));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut tasks = Vec::new();
    for n in 0..seconds * per_second {
        tick.tick().await;
        tasks.push(tokio::spawn(each(n)));
    }
    for task in tasks {
        let _ = task.await;
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [feed, internal, public, token] = &args[..4.min(args.len())] else {
        anyhow::bail!(
            "usage: changes FEED INTERNAL_URL PUBLIC_URL TOKEN [SECONDS] [STOCK/s] [PRICES/s]"
        );
    };
    let number =
        |at: usize, default: u64| args.get(at).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (seconds, stock_rate, price_rate) = (number(4, 30), number(5, 200), number(6, 20));
    let lines = Arc::new(products(feed)?);
    // The feed read (seconds at low priority under load) before the load
    // is measured: the script starts wrk once this file is there, so that
    // changes run through all of wrk's window.
    if let Some(ready) = std::env::var_os("CHANGES_READY") {
        std::fs::write(ready, b"")?;
    }
    let load = Arc::new(Load {
        http: reqwest::Client::new(),
        internal: internal.clone(),
        public: public.clone(),
        token: token.clone(),
        stock: Counts::default(),
        prices: Counts::default(),
    });
    let pick = |n: u64, salt: u64| {
        let at = n.wrapping_mul(2_654_435_761).wrapping_add(salt) % lines.len() as u64;
        record(&lines[at as usize])
    };
    let stock = at_rate(seconds, stock_rate, |n| {
        let (load, record) = (load.clone(), pick(n, 17));
        async move {
            match record {
                Ok(record) => load.stock(&record.sku, n % 40).await,
                Err(e) => eprintln!("{e}"),
            }
        }
    });
    let (watched, queue) = unbounded_channel();
    let watcher = tokio::spawn(watch(load.clone(), queue));
    let prices = at_rate(seconds, price_rate, |n| {
        let (load, record, watched) = (load.clone(), pick(n, 7_919), watched.clone());
        async move {
            match record {
                Ok(record) => load.price(record, n, watched).await,
                Err(e) => eprintln!("{e}"),
            }
        }
    });
    tokio::join!(stock, prices);
    drop(watched);
    let (mut delays, unseen) = watcher.await?;
    delays.sort_unstable();
    let summary = json!({
        "seconds": seconds,
        "stock": {"sent": load.stock.sent.load(Ordering::Relaxed), "failed": load.stock.failed.load(Ordering::Relaxed)},
        "prices": {"sent": load.prices.sent.load(Ordering::Relaxed), "failed": load.prices.failed.load(Ordering::Relaxed)},
        "searchDelayMs": {
            "p50": percentile(&delays, 0.5),
            "p99": percentile(&delays, 0.99),
            "max": delays.last().copied().unwrap_or(0),
            "seen": delays.len(),
            "unseen": unseen,
        },
    });
    println!("{summary}");
    Ok(())
}
