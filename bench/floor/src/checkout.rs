//! The checkout load of `bench/scale.sh`: checkout open, payment (the test
//! provider's `pm_card_visa`) and confirm, each measured on its own at a
//! fixed concurrency, and the whole flow (each session's three answers
//! added up; its throughput from the three phases' times), with this
//! driver's own floor (the same client asking the floor's axum -> tonic
//! route) measured in the same run, so the ratio is not the client's cost.
//! A build without payments (404 to the payment) is measured open and
//! confirm only, so one run compares a build before payments with one after.
//!
//! Usage: `checkout BASE_URL FLOOR_URL PRODUCTS_FILE [SECONDS] [WORKERS]`.
//! Each worker is a customer with an address. A round: every worker makes
//! `CARTS` carts of one line (not measured), then all open a checkout for
//! each (measured together), then all pay them, then all confirm them.
//! Between rounds (not measured) every order made is cancelled, which
//! returns its unit to the stock: confirms sell what they buy, so a run
//! would otherwise empty the products it buys.
//! Rounds repeat until each phase has run for SECONDS. Prints one line per
//! measurement, `RESULT NAME rps p50_us p99_us p999_us errors`. With
//! `MESH_PID` (the mesh's process), also the mesh's CPU a session in each
//! phase (on stderr). With `SHOPPERS_READY_FILE`, that file is written once
//! every shopper has signed up, before the first round.

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

/// Whether the build answered a payment (one without payments 404s).
static PAYING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A build without the payment route: its 404 names no route.
fn no_payments(error: &anyhow::Error) -> bool {
    let text = format!("{error:#}");
    text.starts_with("404") && text.contains("no resource at this path")
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

    /// Opens a checkout of each cart of `items`, pays or confirms each
    /// session of them, timing each: the phase, and each item's answer
    /// (an id) and time, in order (none for a failure).
    async fn timed(&self, step: Step, items: &[String]) -> (Phase, Vec<Option<(String, u64)>>) {
        let mut phase = Phase::default();
        let mut answers = Vec::with_capacity(items.len());
        for item in items {
            let start = Instant::now();
            let answer = match step {
                Step::Open => {
                    let body = json!({"cartId": item, "shippingAddressId": self.address});
                    send(self.post("/checkout").json(&body)).await
                }
                Step::Pay => {
                    let body = json!({"paymentMethod": "pm_card_visa"});
                    let path = format!("/checkout/{item}/payment");
                    match send(self.post(&path).json(&body)).await {
                        Err(e) if no_payments(&e) => {
                            answers.push(Some((item.clone(), 0)));
                            continue;
                        }
                        answer => {
                            PAYING.store(true, std::sync::atomic::Ordering::Relaxed);
                            answer
                        }
                    }
                }
                Step::Confirm => send(self.post(&format!("/checkout/{item}/confirm"))).await,
            };
            match answer {
                Ok(body) => {
                    let micros = start.elapsed().as_micros() as u64;
                    phase.latencies.push(micros);
                    let id = match step {
                        Step::Open => &body["id"],
                        Step::Pay => &Value::String(item.clone()),
                        Step::Confirm => &body["orderId"],
                    };
                    let id = id.as_str().unwrap_or_default().to_string();
                    answers.push(Some((id, micros)));
                }
                Err(e) => {
                    phase.errors += 1;
                    answers.push(None);
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
    Pay,
    Confirm,
}

/// The ids of the answered items, and (with `times`) each one's time
/// added to what its item took so far.
fn answered(answers: Vec<Option<(String, u64)>>, times: &mut [Option<u64>]) -> Vec<String> {
    let mut ids = Vec::new();
    for (answer, time) in answers.into_iter().zip(times.iter_mut()) {
        match answer {
            Some((id, micros)) => {
                *time = time.map(|t| t + micros);
                ids.push(id);
            }
            None => *time = None,
        }
    }
    ids
}

/// One worker's phases, and its whole flows.
#[derive(Default)]
struct Phases {
    opened: Phase,
    paid: Phase,
    confirmed: Phase,
    flows: Phase,
}

/// One worker's rounds: its phases, timed by the caller between barriers.
async fn rounds(
    shopper: Shopper,
    products: Arc<Vec<String>>,
    n: usize,
    barrier: Arc<Barrier>,
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> Phases {
    let mut phases = Phases::default();
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
        let (phase, answers) = shopper.timed(Step::Open, &carts).await;
        phases.opened.add(phase);
        let mut times: Vec<Option<u64>> = vec![Some(0); answers.len()];
        let sessions = answered(answers, &mut times);
        times.retain(Option::is_some);
        barrier.wait().await;
        let (phase, answers) = shopper.timed(Step::Pay, &sessions).await;
        phases.paid.add(phase);
        let paid = answered(answers, &mut times);
        times.retain(Option::is_some);
        barrier.wait().await;
        let (phase, answers) = shopper.timed(Step::Confirm, &paid).await;
        phases.confirmed.add(phase);
        let orders = answered(answers, &mut times);
        phases.flows.latencies.extend(times.into_iter().flatten());
        barrier.wait().await;
        // The timer has decided whether this was the last round.
        barrier.wait().await;
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return phases;
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
                        other => {
                            // Each worker's first says why (one run's floor
                            // answered only errors, and nothing said why).
                            if phase.errors == 0 {
                                eprintln!("the driver's floor answered {other:?}");
                            }
                            phase.errors += 1;
                        }
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
    // A profiler's cue that the sign-ups (password hashing) are over and
    // the sessions begin: `callgrind_control --instr=on` counts from here.
    if let Ok(path) = std::env::var("SHOPPERS_READY_FILE") {
        std::fs::write(&path, b"")?;
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
    let mut times = [Duration::ZERO; 3];
    let mut mesh = MeshCpu::new(std::env::var("MESH_PID").ok());
    loop {
        barrier.wait().await;
        mesh.lap(BETWEEN);
        for (phase, time) in times.iter_mut().enumerate() {
            let start = Instant::now();
            barrier.wait().await;
            *time += start.elapsed();
            mesh.lap(phase);
        }
        // A build without payments spends no time paying: its open and
        // confirm decide.
        let paying = PAYING.load(std::sync::atomic::Ordering::Relaxed);
        let measured = times.iter().enumerate().filter(|(i, _)| paying || *i != 1);
        let done = measured.map(|(_, t)| *t).min() >= Some(Duration::from_secs(seconds));
        stop.store(done, std::sync::atomic::Ordering::Relaxed);
        barrier.wait().await;
        if done {
            break;
        }
    }
    let mut all = Phases::default();
    for task in tasks {
        let phases = task.await?;
        all.opened.add(phases.opened);
        all.paid.add(phases.paid);
        all.confirmed.add(phases.confirmed);
        all.flows.add(phases.flows);
    }
    let [open_time, pay_time, confirm_time] = times;
    all.opened.elapsed = open_time;
    all.paid.elapsed = pay_time;
    all.confirmed.elapsed = confirm_time;
    // The flows' throughput: each phase ran all its sessions in its time.
    all.flows.elapsed = if all.paid.latencies.is_empty() {
        open_time + confirm_time
    } else {
        open_time + pay_time + confirm_time
    };
    all.opened.report("checkout open");
    if !all.paid.latencies.is_empty() {
        all.paid.report("checkout payment");
    }
    let sessions = all.confirmed.latencies.len().max(1) as u64;
    all.confirmed.report("checkout confirm");
    all.flows.report("checkout flow");
    mesh.report(sessions);
    Ok(())
}

/// Where `MeshCpu` counts the carts made and the orders cancelled.
const BETWEEN: usize = 3;

/// The mesh's CPU in each phase (open, payment, confirm) and between
/// them, when MESH_PID names its process; each phase's window is printed
/// in `/proc/uptime` seconds, to slice a profile recorded with
/// `perf record -k CLOCK_MONOTONIC` by phase.
struct MeshCpu {
    pid: Option<String>,
    ticks: [u64; 4],
    mark: u64,
    since: String,
}

impl MeshCpu {
    fn new(pid: Option<String>) -> Self {
        let mark = mesh_ticks(pid.as_deref());
        Self {
            pid,
            ticks: [0; 4],
            mark,
            since: uptime(),
        }
    }

    /// Counts the CPU since the last lap to `slot`.
    fn lap(&mut self, slot: usize) {
        let Some(pid) = self.pid.as_deref() else {
            return;
        };
        let now = mesh_ticks(Some(pid));
        self.ticks[slot] += now - self.mark;
        self.mark = now;
        let until = uptime();
        if slot != BETWEEN {
            eprintln!("PHASE {slot} {} {until}", self.since);
        }
        self.since = until;
    }

    fn report(&self, sessions: u64) {
        if self.pid.is_none() {
            return;
        }
        eprintln!("MESH CPU sessions: {sessions}");
        let names = ["open", "payment", "confirm", "carts and cancels"];
        for (name, ticks) in names.iter().zip(self.ticks) {
            // Clock ticks are 10 ms on Linux.
            eprintln!(
                "MESH CPU {name}: {} us a session",
                ticks * 10_000 / sessions
            );
        }
    }
}

fn uptime() -> String {
    let up = std::fs::read_to_string("/proc/uptime").unwrap_or_default();
    up.split(' ').next().unwrap_or_default().to_string()
}

/// User and system clock ticks of process `pid` so far (0 without one).
fn mesh_ticks(pid: Option<&str>) -> u64 {
    let Some(stat) = pid.and_then(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).ok())
    else {
        return 0;
    };
    // Fields after the command's closing parenthesis: utime and stime are
    // the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    tick(11) + tick(12)
}
