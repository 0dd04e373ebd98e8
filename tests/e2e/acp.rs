//! Issue 49: agents shop through the Agentic Commerce Protocol facade,
//! held to the protocol's own documents (`tests/acp/`): its example
//! requests drive a whole session, and every answer is validated against
//! its JSON schema with Python's `jsonschema`.

use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::digest::{SHA256, digest};
use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::{Method, RequestBuilder};
use serde_json::{Value, json};

use crate::helpers::{Api, Backend, Reply, spawn_mesh_on};
use crate::journey::buyable;

pub const VERSION: &str = "2026-04-17";
pub const SIGNER_KEY: &str = "acp_test_signer_key";
pub const SIGNER_SECRET: &str = "acp_test_signer_secret";
const DEMO_KEY: &str = "acp_demo_local_key";

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `ACP_AGENTS` with one agent that must sign (the demo agent is added),
/// its order webhooks to `hook` when given.
pub fn agents_with(hook: Option<&str>) -> String {
    let hash = hex(digest(&SHA256, SIGNER_KEY.as_bytes()).as_ref());
    let mut agent =
        json!({"id": "signer", "keySha256": hash, "signingSecret": SIGNER_SECRET, "signs": true});
    if let Some(url) = hook {
        agent["webhookUrl"] = json!(url);
    }
    json!([agent]).to_string()
}

pub fn timestamp(skew_secs: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    storefront_proto::Timestamp {
        seconds: now + skew_secs,
        nanos: 0,
    }
    .to_string()
}

/// docs/agents.md: HMAC-SHA256 over timestamp, method, path and body.
pub fn signature(secret: &str, at: &str, method: &Method, path: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let mut text = format!("{at}\n{method}\n{path}\n").into_bytes();
    text.extend_from_slice(body);
    URL_SAFE_NO_PAD.encode(hmac::sign(&key, &text).as_ref())
}

/// An agent's client; every answer it gets is kept for the schema check.
pub struct Agent<'a> {
    api: &'a Api,
    key: &'static str,
    secret: Option<&'static str>,
    pub answers: Vec<Value>,
}

impl<'a> Agent<'a> {
    pub fn new(api: &'a Api, key: &'static str, secret: Option<&'static str>) -> Self {
        Agent {
            api,
            key,
            secret,
            answers: Vec::new(),
        }
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        idempotency: Option<&str>,
    ) -> RequestBuilder {
        let bytes = body
            .map(|b| serde_json::to_vec(b).unwrap())
            .unwrap_or_default();
        let mut request = self
            .api
            .request(method.clone(), path)
            .header("Authorization", format!("Bearer {}", self.key))
            .header("API-Version", VERSION)
            .header("Request-Id", "req-1");
        if let Some(secret) = self.secret {
            let at = timestamp(0);
            let signed = signature(secret, &at, &method, path, &bytes);
            request = request.header("Timestamp", at).header("Signature", signed);
        }
        if let Some(key) = idempotency {
            request = request.header("Idempotency-Key", key);
        }
        if body.is_some() {
            request = request
                .header("Content-Type", "application/json")
                .body(bytes);
        }
        request
    }

    pub async fn post(&mut self, path: &str, body: &Value, key: &str) -> Reply {
        self.call(Method::POST, path, Some(body), Some(key)).await
    }

    /// Sends, and keeps the answer as the schema definition it must meet.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        key: Option<&str>,
    ) -> Reply {
        let reply = self
            .api
            .send(self.request(method.clone(), path, body, key))
            .await;
        let def = match (reply.status.as_u16(), reply.body.get("order")) {
            (200..=299, Some(_)) => "CheckoutSessionWithOrder",
            (200..=299, None) => "CheckoutSession",
            _ => "Error",
        };
        let name = format!("{method} {path} -> {}", reply.status);
        self.answers
            .push(json!({"def": def, "name": name, "value": reply.body}));
        reply
    }
}

/// The protocol's example request `name`, its item ids made ours.
pub fn example(name: &str, item: &str) -> Value {
    let path = format!(
        "{}/tests/acp/examples.agentic_checkout.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let all: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let text = all[name].to_string().replace("item_123", item);
    serde_json::from_str(&text).unwrap()
}

pub async fn variant_of(api: &Api, product: &str) -> (String, u64) {
    let detail = api.ok(&format!("/products/{product}")).await;
    let master = &detail["masterVariant"];
    let id = format!("{product}:{}", master["id"]);
    (id, master["availability"]["quantity"].as_u64().unwrap())
}

async fn held_stock(api: &Api, product: &str) -> u64 {
    variant_of(api, product).await.1
}

pub fn path_of(session: &Value) -> String {
    format!("/acp/checkout_sessions/{}", session["id"].as_str().unwrap())
}

pub fn validated(answers: Vec<Value>) {
    let script = format!("{}/tests/acp/validate.py", env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with jsonschema (scripts/test installs it)");
    let input = serde_json::to_vec(&answers).unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{printed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        printed.contains("hold to the protocol's schema"),
        "{printed}"
    );
}

async fn a_whole_session_by_the_protocol(backend: Backend) {
    let t = spawn_mesh_on(backend, &[("ACP_AGENTS", &agents_with(None))]).await;
    let products = buyable(&t, 5).await;
    let (item, _) = variant_of(&t, &products[0].0).await;
    let mut agent = Agent::new(&t, SIGNER_KEY, Some(SIGNER_SECRET));

    let discovery = t
        .send(t.request(Method::GET, "/.well-known/acp.json"))
        .await;
    assert_eq!(
        discovery.body["protocol"]["version"], VERSION,
        "{}",
        discovery.body
    );
    assert!(
        discovery.body["capabilities"]["supported_currencies"]
            .as_array()
            .unwrap()
            .contains(&json!("usd"))
    );

    // Create: the protocol's example (one item to an address in the US).
    let create = example("create_checkout_session_request", &item);
    let created = agent
        .post("/acp/checkout_sessions", &create, "create-1")
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.header("request-id"), Some("req-1"));
    let session = &created.body;
    assert_eq!(session["status"], "ready_for_payment", "{session}");
    assert_eq!(session["currency"], "usd");
    assert_eq!(session["line_items"][0]["item"]["id"], item.as_str());
    let options: Vec<&str> = session["fulfillment_options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert!(options.len() >= 2, "{session}");
    let id = session["id"].as_str().unwrap().to_string();
    let path = format!("/acp/checkout_sessions/{id}");

    // The same key: the same answer; another body: the protocol's conflict.
    let again = agent
        .post("/acp/checkout_sessions", &create, "create-1")
        .await;
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.body, created.body);
    let other = json!({"currency": "usd", "line_items": [{"id": item, "quantity": 2}]});
    let conflict = agent
        .post("/acp/checkout_sessions", &other, "create-1")
        .await;
    assert_eq!(
        (conflict.status.as_u16(), conflict.body["code"].as_str()),
        (422, Some("idempotency_conflict")),
        "{}",
        conflict.body
    );

    // Update: the example's shipping choice, made one of ours.
    let mut update = example("update_checkout_session_request", &item);
    update["selected_fulfillment_options"][0]["option_id"] = json!(options[1]);
    let updated = agent.post(&path, &update, "update-1").await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(
        updated.body["selected_fulfillment_options"][0]["option_id"],
        options[1]
    );
    let total = |s: &Value| {
        s["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "total")
            .unwrap()["amount"]
            .as_i64()
            .unwrap()
    };
    assert!(
        total(&updated.body) > total(session),
        "a dearer method: {}",
        updated.body
    );

    // Complete: the example's delegated token pays; an order exists.
    let complete = example("complete_checkout_session_request", &item);
    let completed = agent
        .post(&format!("{path}/complete"), &complete, "complete-1")
        .await;
    assert_eq!(completed.status, 200, "{}", completed.body);
    assert_eq!(completed.body["status"], "completed");
    let order = completed.body["order"]["id"].as_str().unwrap().to_string();
    assert!(
        completed.body["order"]["permalink_url"]
            .as_str()
            .unwrap()
            .contains(&order)
    );
    let retried = agent
        .post(&format!("{path}/complete"), &complete, "complete-2")
        .await;
    assert_eq!(
        retried.body["order"]["id"],
        order.as_str(),
        "one order however often: {}",
        retried.body
    );
    let got = agent.call(Method::GET, &path, None, None).await;
    assert_eq!(got.body["status"], "completed");
    let late = agent
        .call(
            Method::POST,
            &format!("{path}/cancel"),
            None,
            Some("cancel-1"),
        )
        .await;
    assert_eq!(
        (late.status.as_u16(), late.body["code"].as_str()),
        (405, Some("session_completed"))
    );

    // Another agent does not see it.
    let mut demo = Agent::new(&t, DEMO_KEY, None);
    let foreign = demo.call(Method::GET, &path, None, None).await;
    assert_eq!(
        (foreign.status.as_u16(), foreign.body["code"].as_str()),
        (404, Some("not_found"))
    );

    let mut scarce = None;
    for (product, _) in &products[1..] {
        if variant_of(&t, product).await.1 < 98 {
            scarce = Some(product.clone());
            break;
        }
    }
    let scarce = scarce.expect("a product with fewer than 98 in stock (a line takes 99)");
    canceled_and_short(&t, &mut agent, &scarce).await;
    refused_requests(&t, &mut agent, &path).await;
    let mut answers = agent.answers;
    answers.extend(demo.answers);
    tokio::task::spawn_blocking(move || validated(answers))
        .await
        .unwrap();
}

/// A cancel gives the held stock back; more of an item than the shop has
/// is a message.
async fn canceled_and_short(t: &Api, agent: &mut Agent<'_>, product: &str) {
    let (item, stock) = variant_of(t, product).await;
    let address = example("create_checkout_session_request", &item)["fulfillment_details"].clone();
    let body = json!({"currency": "usd", "line_items": [{"id": item, "quantity": 2}], "fulfillment_details": address});
    let created = agent
        .post("/acp/checkout_sessions", &body, "create-2")
        .await;
    assert_eq!(
        created.body["status"], "ready_for_payment",
        "{}",
        created.body
    );
    assert_eq!(held_stock(t, product).await, stock - 2, "held");
    let path = path_of(&created.body);
    let cancel = example("cancel_checkout_session_request", &item);
    let canceled = agent
        .post(&format!("{path}/cancel"), &cancel, "cancel-2")
        .await;
    assert_eq!(canceled.body["status"], "canceled", "{}", canceled.body);
    assert_eq!(held_stock(t, product).await, stock, "released at once");
    assert_eq!(
        agent.call(Method::GET, &path, None, None).await.body["status"],
        "canceled"
    );
    let after = agent.post(&path, &json!({}), "update-2").await;
    assert_eq!(after.status, 405, "{}", after.body);

    let many = json!({"currency": "usd", "line_items": [{"id": item, "quantity": stock + 1}], "fulfillment_details": address});
    let short = agent
        .post("/acp/checkout_sessions", &many, "create-3")
        .await;
    assert_eq!(short.status, 201, "{}", short.body);
    assert_ne!(short.body["status"], "ready_for_payment", "{}", short.body);
    let message = &short.body["messages"][0];
    assert_eq!(
        (message["type"].as_str(), message["code"].as_str()),
        (Some("error"), Some("out_of_stock")),
        "{}",
        short.body
    );
    assert_eq!(message["param"], "$.line_items[0].id");
    let path = path_of(&short.body);
    let complete = example("complete_checkout_session_request", &item);
    let refused = agent
        .post(&format!("{path}/complete"), &complete, "complete-3")
        .await;
    assert_eq!(
        refused.status, 400,
        "no order without a held session: {}",
        refused.body
    );
}

/// Unsigned, stale, forged, keyless, versionless: refused in the
/// protocol's shape.
async fn refused_requests(t: &Api, agent: &mut Agent<'_>, path: &str) {
    let get = |key: &str| {
        t.request(Method::GET, path)
            .header("Authorization", format!("Bearer {key}"))
            .header("API-Version", VERSION)
    };
    let cases: Vec<(RequestBuilder, u16, &str)> = vec![
        (get(SIGNER_KEY), 401, "invalid_signature"),
        (
            get(SIGNER_KEY).header("Timestamp", timestamp(-600)).header(
                "Signature",
                signature(SIGNER_SECRET, &timestamp(-600), &Method::GET, path, b""),
            ),
            401,
            "stale_timestamp",
        ),
        (
            get(SIGNER_KEY).header("Timestamp", timestamp(0)).header(
                "Signature",
                signature("wrong", &timestamp(0), &Method::GET, path, b""),
            ),
            401,
            "invalid_signature",
        ),
        (get("not-a-key"), 401, "unauthorized"),
        (
            t.request(Method::GET, path)
                .header("Authorization", format!("Bearer {DEMO_KEY}")),
            400,
            "unsupported_api_version",
        ),
        (
            agent.request(
                Method::POST,
                "/acp/checkout_sessions",
                Some(&json!({})),
                None,
            ),
            400,
            "idempotency_key_required",
        ),
        (
            agent.request(Method::GET, "/acp/checkout_sessions/cs_nope", None, None),
            404,
            "not_found",
        ),
    ];
    for (n, (request, status, code)) in cases.into_iter().enumerate() {
        let reply = t.send(request).await;
        assert_eq!(
            (reply.status.as_u16(), reply.body["code"].as_str()),
            (status, Some(code)),
            "case {n}: {}",
            reply.body
        );
        assert_eq!(reply.body["type"], "invalid_request", "{}", reply.body);
        agent
            .answers
            .push(json!({"def": "Error", "name": format!("refused {n}"), "value": reply.body}));
    }
}

mod whole_session {
    use super::*;

    #[tokio::test]
    async fn memory() {
        a_whole_session_by_the_protocol(Backend::Memory).await;
    }

    #[tokio::test]
    async fn redis() {
        a_whole_session_by_the_protocol(Backend::Redis).await;
    }
}
