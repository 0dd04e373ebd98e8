//! A burst of logins against the customers service as its own process:
//! argon2id takes 19 MiB a hash, so the hashes at once are bounded
//! (`ARGON2_MAX_CONCURRENT`); logins past the bound wait, then answer 503
//! with Retry-After (the customers service's `PASSWORD_CHECKS_BUSY`, which
//! the gateway answers as any downstream's unavailability), and the
//! process's peak memory
//! grows by about the bound's hashes, not the burst's.

use reqwest::Method;
use serde_json::json;

use super::Processes;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_burst_is_bounded_in_memory() {
    let mesh = Processes::start(|program, env, _| match program {
        "customers" => {
            env.push(("ARGON2_MAX_CONCURRENT".into(), "2".into()));
            env.push(("ARGON2_QUEUE_MS".into(), "300".into()));
        }
        "gateway" => env.push(("RATE_LIMIT_LOGIN".into(), "off".into())),
        _ => {}
    })
    .await;
    let api = &mesh.api;
    let before = mesh.program_ref("customers").peak_rss_kib();
    let body = json!({"emailAddress": "ava@example.com", "password": "storefront-demo-1", "gRecaptchaResponse": "dev-ok"});
    let logins = (0..100).map(|_| api.send(api.json(Method::POST, "/auth/login", None, &body)));
    let replies = futures::future::join_all(logins).await;
    let (mut ok, mut busy) = (0, 0);
    for reply in &replies {
        match reply.status.as_u16() {
            200 => ok += 1,
            503 => {
                reply.error(503, "SERVICE_UNAVAILABLE");
                assert!(reply.header("retry-after").is_some());
                busy += 1;
            }
            _ => panic!("200 or 503, not {}: {}", reply.status, reply.body),
        }
    }
    assert!(ok >= 2, "{ok} logged in, {busy} told to retry");
    let grown_mib = mesh
        .program_ref("customers")
        .peak_rss_kib()
        .saturating_sub(before)
        / 1024;
    eprintln!("100 logins at once: {ok} ok, {busy} told to retry; peak RSS +{grown_mib} MiB");
    // Two hashes of 19 MiB at once, with room for the sessions written;
    // unbounded, 100 at once would be about 1.9 GB.
    assert!(
        grown_mib < 120,
        "peak RSS grew by {grown_mib} MiB ({ok} ok, {busy} busy)"
    );
}
