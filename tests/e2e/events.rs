//! Issue 48 item 4: order events any back office reads. Every order
//! change is a CloudEvent in JSON on the stream, listed on the internal
//! port by position (`GET /internal/events`) and delivered to webhooks
//! signed per Standard Webhooks, a failed delivery retried. The back
//! office's side is the Python examples (`examples/back-office`), run
//! here with the `cloudevents` and `standardwebhooks` packages: the
//! consumer reads the list, the receiver verifies each delivery.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::catalog_changes::internal;
use crate::helpers::{Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};

const FULFILMENT: &str = "fulfilment@storefront.iam.gserviceaccount.com";
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

fn example(name: &str) -> String {
    format!("{}/examples/back-office/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The Python receiver, its lines as it prints them; stopped when dropped.
struct Receiver {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    port: u16,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("python3")
            .arg(example("receiver.py"))
            .args(["--port", &port.to_string(), "--fail-first"])
            .env("WEBHOOK_SECRET", SECRET)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 with cloudevents and standardwebhooks (scripts/test installs them)");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = BufReader::new(child.stdout.take().unwrap());
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let parsed = serde_json::from_str(&line).unwrap_or(Value::String(line));
                sink.lock().unwrap().push(parsed);
            }
        });
        Self { child, lines, port }
    }

    /// Waits (15 s at most) until `done` holds for what it printed.
    async fn until(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        for _ in 0..150 {
            let lines = self.lines.lock().unwrap().clone();
            if done(&lines) {
                return lines;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "the receiver never saw {what}: {:?}",
            self.lines.lock().unwrap()
        );
    }
}

async fn events(t: &TestMesh, query: &str) -> (u16, Value) {
    let reply = t
        .send(internal(
            t,
            FULFILMENT,
            Method::GET,
            &format!("/internal/events{query}"),
        ))
        .await;
    (reply.status.as_u16(), reply.body)
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

async fn order_events_reach_the_back_office(backend: Backend) {
    let receiver = Receiver::start();
    receiver.until("its start", |l| !l.is_empty()).await;
    let hook = format!("http://127.0.0.1:{}/hooks?token=not-shown", receiver.port);
    let t = spawn_mesh_on(
        backend,
        &[
            ("ORDER_WEBHOOK_URLS", &hook),
            ("ORDER_WEBHOOK_SECRET", SECRET),
            ("ORDER_WEBHOOK_FIRST_RETRY_MS", "200"),
        ],
    )
    .await;
    let product = &buyable(&t, 5).await[0].0;
    let shopper = Shopper::new(&t).await;
    let session = shopper.checkout_one(product).await;
    let confirmed = shopper.confirm(&session).await;
    assert_eq!(confirmed.status, 200, "{}", confirmed.body);
    let order = confirmed.body["orderId"].as_str().unwrap().to_string();
    let path = format!("/internal/orders/{order}/status");
    let moved = t
        .send(internal(&t, FULFILMENT, Method::PUT, &path).json(&json!({"status": "PROCESSING"})))
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);

    // The list: CloudEvents, the order as the API shows it, by position.
    let (status, all) = events(&t, "?limit=100").await;
    assert_eq!(status, 200, "{all}");
    let all = all.as_array().unwrap().clone();
    let created = of_type(&all, "com.storefront.order.created");
    assert_eq!(created.len(), 1, "{all:?}");
    let created = created[0];
    assert_eq!(created["specversion"], "1.0");
    assert_eq!(created["source"], "/storefront/orders");
    assert_eq!(created["subject"], order.as_str());
    assert_eq!(created["datacontenttype"], "application/json");
    assert_eq!(created["data"]["id"], order.as_str());
    assert_eq!(created["data"]["status"], "CONFIRMED");
    assert!(
        created["data"]["totals"]["total"]["centAmount"]
            .as_i64()
            .unwrap()
            > 0
    );
    assert_eq!(of_type(&all, "com.storefront.payment.authorized").len(), 1);
    let changed = of_type(&all, "com.storefront.order.status_changed");
    assert_eq!(changed[0]["data"]["status"], "PROCESSING");
    let first = created["sequence"].as_str().unwrap();
    let (_, rest) = events(&t, &format!("?after={first}")).await;
    assert_eq!(
        rest.as_array().unwrap().len(),
        all.len() - 1,
        "after the first: the rest"
    );
    for bad in ["?after=x", "?after=1-2-3", "?limit=0", "?limit=101"] {
        let (status, body) = events(&t, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(body["code"], "INVALID_QUERY_PARAMETER", "{body}");
    }

    // The Python consumer reads them with the CloudEvents SDK.
    let token = t.mesh.issuer.mint(FULFILMENT, "gateway-internal").unwrap();
    let base = format!("http://{}", t.mesh.internal_addr);
    // Off the test's runtime: the mesh answering it runs there.
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(example("consumer.py"))
            .env("STOREFRONT_INTERNAL", base)
            .env("STOREFRONT_TOKEN", token)
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        printed.contains(&format!("com.storefront.order.created {order} CONFIRMED")),
        "{printed}"
    );

    // Webhooks: each event verified once, after the retry of its first
    // delivery (the receiver refuses every first one).
    let wanted = [
        "com.storefront.order.created",
        "com.storefront.order.status_changed",
    ];
    let lines = receiver
        .until("both events", |l| {
            wanted.iter().all(|w| l.iter().any(|e| e["type"] == *w))
        })
        .await;
    assert!(
        lines.iter().all(|l| l.get("rejected").is_none()),
        "{lines:?}"
    );
    let handled: Vec<&Value> = lines.iter().filter(|l| l.get("type").is_some()).collect();
    for line in &handled {
        assert_eq!(line["retried"], true, "{line}");
        assert_eq!(line["subject"], order.as_str());
    }
    let reply = t
        .send(internal(&t, FULFILMENT, Method::GET, "/internal/webhooks"))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let endpoint = &reply.body["endpoints"][0];
    assert_eq!(
        endpoint["url"],
        format!("http://127.0.0.1:{}/hooks", receiver.port)
    );
    assert!(endpoint["delivered"].as_u64().unwrap() >= 2, "{endpoint}");
    assert!(
        endpoint["failedAttempts"].as_u64().unwrap() >= 2,
        "{endpoint}"
    );
    assert_eq!(endpoint["abandoned"], 0, "{endpoint}");
    assert!(
        endpoint["lastError"].as_str().unwrap().contains("503"),
        "{endpoint}"
    );
}

#[tokio::test]
async fn order_events_reach_the_back_office_memory() {
    order_events_reach_the_back_office(Backend::Memory).await;
}

#[tokio::test]
async fn order_events_reach_the_back_office_redis() {
    order_events_reach_the_back_office(Backend::Redis).await;
}
