//! Issue 49 item 5: the catalog as the Agentic Commerce Protocol's
//! product feed, for one market: from the internal port (the live
//! catalog, availability net of holds) and from `storefront catalog
//! export --format acp`, validated against the protocol's
//! `schema.feed.json`; a variant's id is an item id the facade takes.

use std::process::Command;

use reqwest::Method;
use serde_json::Value;

use crate::acp::{Agent, SIGNER_KEY, SIGNER_SECRET, agents_with, example};
use crate::catalog_changes::internal;
use crate::helpers::{Backend, python, spawn_mesh_on};

const MERCHANDISING: &str = "merchandising@storefront.iam.gserviceaccount.com";

/// `validate.py --feed` on `path`, checking every `every`th product; its report.
fn feed_holds(path: &str, every: usize) -> String {
    python(
        "tests/acp/validate.py",
        &["--feed", path, &every.to_string()],
        &[],
    )
}

/// A file in a directory of its own, removed with it (a 100,000-product
/// feed is 164 MB).
struct Temp(std::path::PathBuf);

impl Temp {
    fn new(name: &str) -> (Temp, String) {
        let dir = std::env::temp_dir().join(format!("acp-feed-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(name).to_string_lossy().into_owned();
        (Temp(dir), file)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn the_live_catalog_as_a_feed_agents_buy_from() {
    let t = spawn_mesh_on(Backend::Memory, &[("ACP_AGENTS", &agents_with(None))]).await;
    let path = "/internal/catalog/export?format=acp&market=us";
    let reply = t.send(internal(&t, MERCHANDISING, Method::GET, path)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let products = reply.body["products"].as_array().unwrap();
    assert!(products.len() > 100, "{}", products.len());
    let (_dir, file) = Temp::new("live.json");
    std::fs::write(&file, serde_json::to_vec(&reply.body).unwrap()).unwrap();
    let report = tokio::task::spawn_blocking(move || feed_holds(&file, 1))
        .await
        .unwrap();
    assert!(
        report.contains(&format!("feed holds {} products", products.len())),
        "{report}"
    );
    for bad in ["?format=acp", "?format=acp&market=mars", "?format=xml"] {
        let refused = t
            .send(internal(
                &t,
                MERCHANDISING,
                Method::GET,
                &format!("/internal/catalog/export{bad}"),
            ))
            .await;
        assert_eq!(refused.status, 400, "{bad}: {}", refused.body);
    }

    // The feed's first available variant, bought by an agent by its id.
    let variant: &Value = products
        .iter()
        .flat_map(|p| p["variants"].as_array().unwrap())
        .find(|v| v["availability"]["available"] == true && v["price"]["currency"] == "USD")
        .unwrap();
    let item = variant["id"].as_str().unwrap();
    let mut agent = Agent::new(&t, SIGNER_KEY, Some(SIGNER_SECRET));
    let create = example("create_checkout_session_request", item);
    let created = agent
        .post("/acp/checkout_sessions", &create, "feed-1")
        .await;
    assert_eq!(
        created.body["status"], "ready_for_payment",
        "{}",
        created.body
    );
    let unit = created.body["line_items"][0]["unit_amount"].as_i64();
    assert_eq!(
        unit,
        variant["price"]["amount"].as_i64(),
        "the feed's price is the session's"
    );
}

/// The command line's feed of the demo catalog, whole, and of 100,000
/// products (its document parsed whole, every 100th product checked; the
/// release build's time is in docs/agents.md, from `bench/acp_feed.sh`).
#[tokio::test]
async fn the_command_line_writes_the_feed_for_a_market() {
    for (size, every) in [(1_000, 1), (100_000, 100)] {
        let (_dir, file) = Temp::new("cli.json");
        let written = std::fs::File::create(&file).unwrap();
        let status = Command::new(env!("CARGO_BIN_EXE_storefront"))
            .args([
                "catalog",
                "export",
                "--format",
                "acp",
                "--market",
                "nz",
                "--size",
                &size.to_string(),
            ])
            .stdout(written)
            .status()
            .unwrap();
        assert!(status.success());
        let report = tokio::task::spawn_blocking(move || feed_holds(&file, every))
            .await
            .unwrap();
        assert!(report.starts_with("feed holds "), "{report}");
        let held: usize = report["feed holds ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(held > size * 7 / 10 && held <= size, "{size}: {report}");
    }
    let refused = Command::new(env!("CARGO_BIN_EXE_storefront"))
        .args(["catalog", "export", "--format", "acp", "--market", "mars"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no market mars"));
}
