//! The checkout load of `bench/scale.sh`: checkout open and confirm, each
//! measured on its own at a fixed concurrency, with this driver's own
//! floor (the same client asking the floor's axum -> tonic route) measured
//! in the same run, so the ratio is not the client's cost.
//!
//! Usage: `checkout BASE_URL FLOOR_URL PRODUCTS_FILE [SECONDS] [WORKERS]`.
//! Each worker is a customer with an address. A round: every worker makes
//! `CARTS` carts of one line (not measured), then all open a checkout for
//! each (measured together), then all confirm them (measured together).
//! Between rounds (not measured) every order made is cancelled, which
//! returns its unit to the stock: confirms sell what they buy, so a run
//! would otherwise empty the products it buys.
//! Rounds repeat until each phase has run for SECONDS. Prints one line per
//! measurement, `RESULT NAME rps p50_us p99_us p999_us errors`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use tokio::sync::Barrier;

/// Carts per worker and round: under the per-customer cap of active carts.
const CARTS: usize = 10;
const VERSION: (&str, &str) = ("X-Api-Version", "v1.0");

struct Shopper {
    http: reqwest::Client,
    base: String,
    token: String,
    address: String,
}

/// One phase's latencies (us) and failures, over every worker.
#[derive(Default)]
struct Phase {
    latencies: Vec<u64>,
    errors: u64,
    elapsed: Duration,
}

impl Phase {
    fn add(&mut self, other: Phase) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
    }

    fn report(mut self, name: &str) {
        self.latencies.sort_unstable();
        let at = |q: f64| {
            let n = self.latencies.len();
            if n == 0 {
                return 0;
            }
            self.latencies[((n as f64 * q) as usize).min(n - 1)]
        };
        let rps = self.latencies.len() as f64 / self.elapsed.as_secs_f64().max(1e-9);
        println!(
            "RESULT {name} {rps:.1} {} {} {} {}",
            at(0.5),
            at(0.99),
            at(0.999),
            self.errors
        );
    }
}

async fn send(request: reqwest::RequestBuilder) -> anyhow::Result<Value> {
    let reply = request.header(VERSION.0, VERSION.1).send().await?;
    let status = reply.status();
    let body: Value = reply.json().await.unwrap_or(Value::Null);
    anyhow::ensure!(status.is_success(), "{status}: {body}");
    Ok(body)
}

impl Shopper {
    async fn new(http: reqwest::Client, base: &str, n: usize) -> anyhow::Result<Self> {
        let stamp = std::process::id();
        let email = format!("checkout-{stamp}-{n}@example.com");
        let password = "bench password 1";
        let person = json!({"emailAddress": email, "password": password, "firstName": "B",
            "lastName": "M", "gRecaptchaResponse": "dev"});
        send(http.post(format!("{base}/customers")).json(&person)).await?;
        let login =
            json!({"emailAddress": email, "password": password, "gRecaptchaResponse": "dev"});
        let session = send(http.post(format!("{base}/auth/login")).json(&login)).await?;
        let token = session["accessToken"]
            .as_str()
            .context("a token")?
            .to_string();
        let address = json!({"firstName": "B", "lastName": "M", "streetName": "George St",
            "city": "Sydney", "postalCode": "2000", "country": "AU"});
        let url = format!("{base}/customers/me/addresses");
        let made = send(http.post(url).header("X-BFF-Token", &token).json(&address)).await?;
        let address = made["id"].as_str().context("an address id")?.to_string();
        Ok(Self {
            http,
            base: base.to_string(),
            token,
            address,
        })
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        let url = format!("{}{path}", self.base);
        self.http.post(url).header("X-BFF-Token", &self.token)
    }

    /// Cancels `orders`, returning their units to the stock.
    async fn cancel(&self, orders: &[String]) {
        for order in orders.iter().filter(|o| !o.is_empty()) {
            let url = format!("{}/orders/{order}", self.base);
            let put = self.http.put(url).header("X-BFF-Token", &self.token);
            if let Err(e) = send(put.json(&json!({"status": "CANCELLED"}))).await {
                eprintln!("cancelling an order: {e:#}");
            }
        }
    }

    /// A cart holding one unit of `product`.
    async fn cart(&self, product: &str) -> anyhow::Result<String> {
        let cart = send(self.post("/carts")).await?;
        let id = cart["id"].as_str().context("a cart id")?.to_string();
        let line = json!({"productId": product, "variantId": 1, "quantity": 1});
        let added = send(self.post(&format!("/carts/{id}/line-items")).json(&line)).await;
        if let Err(e) = added {
            let url = format!("{}/carts/{id}", self.base);
            let delete = self.http.delete(url).header("X-BFF-Token", &self.token);
            send(delete).await?;
            return Err(e);
        }
        Ok(id)
    }

    /// Opens a checkout of each cart of `items`, or confirms each session
    /// of them, timing each.
    async fn timed(&self, step: Step, items: &[String]) -> (Phase, Vec<String>) {
        let mut phase = Phase::default();
        let mut answers = Vec::with_capacity(items.len());
        for item in items {
            let start = Instant::now();
            let answer = match step {
                Step::Open => {
                    let body = json!({"cartId": item, "shippingAddressId": self.address});
                    send(self.post("/checkout").json(&body)).await
                }
                Step::Confirm => send(self.post(&format!("/checkout/{item}/confirm"))).await,
            };
            match answer {
                Ok(body) => {
                    phase.latencies.push(start.elapsed().as_micros() as u64);
                    let id = match step {
                        Step::Open => &body["id"],
                        Step::Confirm => &body["orderId"],
                    };
                    answers.push(id.as_str().unwrap_or_default().to_string());
                }
                Err(e) => {
                    phase.errors += 1;
                    eprintln!("{e:#}");
                }
            }
        }
        (phase, answers)
    }
}

#[derive(Clone, Copy)]
enum Step {
    Open,
    Confirm,
}

/// One worker's rounds: (open phase, confirm phase), timed by the caller
/// between barriers.
async fn rounds(
    shopper: Shopper,
    products: Arc<Vec<String>>,
    n: usize,
    barrier: Arc<Barrier>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> (Phase, Phase) {
    let (mut opened, mut confirmed) = (Phase::default(), Phase::default());
    let mut next = n * 7;
    loop {
        let mut carts = Vec::with_capacity(CARTS);
        for _ in 0..CARTS {
            next += 1;
            // A worker that stopped would leave the others at the barrier.
            match shopper.cart(&products[next % products.len()]).await {
                Ok(cart) => carts.push(cart),
                Err(e) => eprintln!("making a cart: {e:#}"),
            }
        }
        barrier.wait().await;
        let (phase, sessions) = shopper.timed(Step::Open, &carts).await;
        opened.add(phase);
        barrier.wait().await;
        let (phase, orders) = shopper.timed(Step::Confirm, &sessions).await;
        confirmed.add(phase);
        barrier.wait().await;
        // The timer has decided whether this was the last round.
        barrier.wait().await;
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return (opened, confirmed);
        }
        shopper.cancel(&orders).await;
    }
}

/// GET `url` from `workers` tasks for `seconds`: the driver's floor.
async fn floor(http: &reqwest::Client, url: &str, workers: usize, seconds: u64) -> Phase {
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (http, url) = (http.clone(), url.to_string());
            tokio::spawn(async move {
                let mut phase = Phase::default();
                while Instant::now() < until {
                    let start = Instant::now();
                    match http.get(&url).send().await.map(|r| r.status()) {
                        Ok(s) if s.is_success() => {
                            phase.latencies.push(start.elapsed().as_micros() as u64)
                        }
                        _ => phase.errors += 1,
                    }
                }
                phase
            })
        })
        .collect();
    let start = Instant::now();
    let mut total = Phase::default();
    for task in tasks {
        total.add(task.await.unwrap_or_default());
    }
    total.elapsed = start.elapsed();
    total
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, floor_url, products, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: checkout BASE_URL FLOOR_URL PRODUCTS_FILE [SECONDS] [WORKERS]");
    };
    let seconds: u64 = rest.first().map_or(Ok(5), |s| s.parse())?;
    let workers: usize = rest.get(1).map_or(Ok(64), |s| s.parse())?;
    let products: Vec<String> = std::fs::read_to_string(products)?
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    anyhow::ensure!(!products.is_empty(), "no products");
    let products = Arc::new(products);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(workers)
        .build()?;
    floor(&http, floor_url, workers, seconds)
        .await
        .report("driver floor: axum -> tonic");

    let mut shoppers = Vec::with_capacity(workers);
    for n in 0..workers {
        shoppers.push(Shopper::new(http.clone(), base, n).await?);
    }
    // Every worker, plus this task timing the phases.
    let barrier = Arc::new(Barrier::new(workers + 1));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tasks: Vec<_> = shoppers
        .into_iter()
        .enumerate()
        .map(|(n, s)| {
            let args = (products.clone(), barrier.clone(), stop.clone());
            tokio::spawn(rounds(s, args.0, n, args.1, args.2))
        })
        .collect();
    let (mut open_time, mut confirm_time) = (Duration::ZERO, Duration::ZERO);
    loop {
        barrier.wait().await;
        let start = Instant::now();
        barrier.wait().await;
        open_time += start.elapsed();
        let start = Instant::now();
        barrier.wait().await;
        confirm_time += start.elapsed();
        let done = open_time.min(confirm_time) >= Duration::from_secs(seconds);
        stop.store(done, std::sync::atomic::Ordering::Relaxed);
        barrier.wait().await;
        if done {
            break;
        }
    }
    let (mut opened, mut confirmed) = (Phase::default(), Phase::default());
    for task in tasks {
        let (o, c) = task.await?;
        opened.add(o);
        confirmed.add(c);
    }
    opened.elapsed = open_time;
    confirmed.elapsed = confirm_time;
    opened.report("checkout open");
    confirmed.report("checkout confirm");
    Ok(())
}
