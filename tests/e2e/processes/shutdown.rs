//! SIGTERM under load: the gateway stops being ready, keeps serving through
//! its shutdown delay, drains what is in flight, and exits 0; no request it
//! accepted fails.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

use super::{Processes, proxy};

/// Accepting after SIGTERM (readiness failing) before the listener closes.
const SHUTDOWN_DELAY: Duration = Duration::from_millis(1500);
/// Every catalog answer is this late, so requests are in flight when the
/// listener closes.
const CATALOG_DELAY: Duration = Duration::from_millis(600);
const CLIENTS: usize = 16;

struct Outcome {
    started: Instant,
    finished: Instant,
    result: Result<u16, String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_fails_no_accepted_request() {
    let catalog = Arc::new(OnceLock::new());
    let slow_catalog = proxy::delaying(catalog.clone(), CATALOG_DELAY).await;
    let mut mesh = Processes::start(|program, env, addrs| {
        if program == "gateway" {
            let _ = catalog.set(addrs.addr("catalog"));
            env.push(("CATALOG_URL".into(), format!("http://{slow_catalog}")));
            env.push((
                "SHUTDOWN_DELAY_MS".into(),
                SHUTDOWN_DELAY.as_millis().to_string(),
            ));
            env.push(("DRAIN_TIMEOUT_MS".into(), "10000".into()));
            env.push(("GRPC_TIMEOUT_MS".into(), "5000".into()));
            env.push(("RATE_LIMIT_IP".into(), "off".into()));
        }
    })
    .await;
    let base = mesh.api.base.clone();

    // Load: each client opens a new connection per request, so "accepted"
    // means the gateway accepted that connection. Clients stop sending a
    // little before the listener closes, as a load balancer that saw
    // readiness fail does.
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let stop_sending = Arc::new(Mutex::new(None::<Instant>));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let (outcomes, stop_sending, base) =
                (outcomes.clone(), stop_sending.clone(), base.clone());
            tokio::spawn(async move {
                // Staggered across one catalog delay, so that whenever the
                // listener closes some requests are half-way through.
                tokio::time::sleep(CATALOG_DELAY * i as u32 / CLIENTS as u32).await;
                let http = reqwest::Client::builder()
                    .pool_max_idle_per_host(0)
                    .build()
                    .unwrap();
                loop {
                    if stop_sending
                        .lock()
                        .await
                        .is_some_and(|t| Instant::now() >= t)
                    {
                        return;
                    }
                    let started = Instant::now();
                    let result = http
                        .get(format!("{base}/products?limit=5"))
                        .header("X-Api-Version", "v1.0")
                        .send()
                        .await;
                    let result = match result {
                        Ok(r) => {
                            let status = r.status().as_u16();
                            r.bytes().await.map(|_| status).map_err(|e| e.to_string())
                        }
                        Err(e) => Err(e.to_string()),
                    };
                    let finished = Instant::now();
                    outcomes.lock().await.push(Outcome {
                        started,
                        finished,
                        result,
                    });
                }
            })
        })
        .collect();

    tokio::time::sleep(Duration::from_secs(2)).await;
    let gateway = mesh.program("gateway");
    let sigterm = Instant::now();
    *stop_sending.lock().await = Some(sigterm + SHUTDOWN_DELAY - Duration::from_millis(200));
    gateway.terminate();

    // Not ready at once, still serving.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ready = reqwest::get(format!("{base}/health/ready"))
        .await
        .expect("still accepting");
    assert_eq!(ready.status(), 503, "readiness fails after SIGTERM");
    let body: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(body["code"], "NOT_READY");

    let status = gateway.wait(Duration::from_secs(20)).await;
    let exited = Instant::now();
    assert!(status.success(), "the gateway exits 0, got {status}");
    for client in clients {
        client.await.unwrap();
    }

    let outcomes = outcomes.lock().await;
    let failed: Vec<&String> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .collect();
    assert!(failed.is_empty(), "accepted requests failed: {failed:?}");
    let not_ok: Vec<u16> = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok().copied())
        .filter(|&s| s != 200)
        .collect();
    assert!(not_ok.is_empty(), "non-200 answers: {not_ok:?}");
    let served_after_sigterm = outcomes.iter().filter(|o| o.started > sigterm).count();
    assert!(
        served_after_sigterm >= CLIENTS,
        "served on through the delay"
    );
    let closing = sigterm + SHUTDOWN_DELAY;
    let drained = outcomes
        .iter()
        .filter(|o| o.started < closing && o.finished > closing)
        .count();
    assert!(
        drained > 0,
        "some requests were in flight when the listener closed"
    );
    assert!(exited > closing, "the gateway waited for them");
    let refused = reqwest::get(format!("{base}/health/live")).await;
    assert!(
        refused.is_err_and(|e| e.is_connect()),
        "nothing listens any more"
    );
}
