//! Every string field of every documented body, and every path parameter
//! of every documented route, sent at 1 KiB, 8 KiB and 1 MiB: each answer
//! is a 4xx in the spec's shape, no request leaves an ERROR line in the
//! logs, and no downstream's circuit opens (the routes still answer).
//! The cases are read from the served OpenAPI document, so a new route or
//! field is tried without a line here. Also the attack of issue 25: one
//! customer's over-long line items never pause another customer's cart.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{Api, Backend, TestMesh, spawn_mesh_on};
use crate::journey::{Shopper, buyable};
use crate::logs;

const SIZES: [usize; 3] = [1024, 8 * 1024, 1024 * 1024];

/// Budgets out of reach: this sweep is about sizes, not rates.
const NO_LIMITS: &[(&str, &str)] = &[
    ("RATE_LIMIT_IP", "off"),
    ("RATE_LIMIT_SESSION", "off"),
    ("RATE_LIMIT_SEARCH", "off"),
    ("RATE_LIMIT_LOGIN", "off"),
    ("RATE_LIMIT_LOGIN_EMAIL", "off"),
    ("RATE_LIMIT_SIGNUP", "off"),
];

/// The schema behind a `$ref`, or the schema itself.
fn resolved<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        Some(name) => &doc["components"]["schemas"][name],
        None => schema,
    }
}

fn is_string(doc: &Value, schema: &Value) -> bool {
    let schema = resolved(doc, schema);
    let typed = match &schema["type"] {
        Value::String(t) => t == "string",
        Value::Array(types) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    typed
        || ["oneOf", "anyOf"].iter().any(|k| {
            schema[k]
                .as_array()
                .is_some_and(|s| s.iter().any(|s| is_string(doc, s)))
        })
}

/// Every (method, path template, string field) of a documented JSON body.
fn body_fields(doc: &Value) -> Vec<(Method, String, String)> {
    let mut cases = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let Some(fields) = resolved(doc, schema)["properties"].as_object() else {
                continue;
            };
            for (field, schema) in fields {
                if is_string(doc, schema) {
                    let method = method.to_uppercase().parse().unwrap();
                    cases.push((method, path.clone(), field.clone()));
                }
            }
        }
    }
    cases
}

/// Every (method, path template, path parameter).
fn path_params(doc: &Value) -> Vec<(Method, String, String)> {
    let mut cases = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for param in op["parameters"].as_array().into_iter().flatten() {
                if param["in"] == "path" {
                    let method = method.to_uppercase().parse().unwrap();
                    let name = param["name"].as_str().unwrap().to_string();
                    cases.push((method, path.clone(), name));
                }
            }
        }
    }
    cases
}

/// `template` with each `{param}` replaced: `big` for `target`, else a
/// real id of the shopper's where it has one, so a request gets as far
/// as it can.
fn fill(template: &str, known: &[(&str, &str)], target: Option<(&str, &str)>) -> String {
    let mut path = template.to_string();
    while let Some(open) = path.find('{') {
        let close = open + path[open..].find('}').unwrap();
        let name = &path[open + 1..close];
        let value = match target {
            Some((t, big)) if t == name => big.to_string(),
            _ => known
                .iter()
                .find(|(k, _)| *k == name)
                .map_or("x", |(_, v)| v)
                .to_string(),
        };
        path.replace_range(open..=close, &value);
    }
    path
}

async fn sweep(t: TestMesh) {
    let shopper = Shopper::new(&t).await;
    let cart = shopper.cart().await;
    let doc = t.ok("/openapi.json").await;
    let known = [("cartId", cart.as_str()), ("customerId", "me")];
    let correlation = uuid::Uuid::new_v4().to_string();
    let send = |method: Method, path: String, body: Option<Value>| {
        let mut request = t
            .request(method, &path)
            .header("X-Api-Version", "v1.0")
            .header("X-BFF-Token", &shopper.token)
            .header("Correlation-Id", &correlation);
        if let Some(body) = body {
            request = request.json(&body);
        }
        refused(&t, path, request)
    };
    let mut sent = 0;
    for size in SIZES {
        let big = "x".repeat(size);
        for (method, template, field) in body_fields(&doc) {
            let path = fill(&template, &known, None);
            send(method, path, Some(json!({ field: big }))).await;
            sent += 1;
        }
        for (method, template, param) in path_params(&doc) {
            let path = fill(&template, &known, Some((&param, &big)));
            if size > MAX_CLIENT_URL {
                raw_refused(&t, &method, &path).await;
            } else {
                let body = matches!(method, Method::POST | Method::PUT).then(|| json!({}));
                send(method, path, body).await;
            }
            sent += 1;
        }
    }
    assert!(
        sent > 150,
        "only {sent} cases: the document lost its routes?"
    );
    let leaked: Vec<String> = logs::captured()
        .lines()
        .filter(|l| l.contains(&correlation))
        .filter(|l| l.contains(r#""level":"ERROR""#) || l.contains("circuit opened"))
        .map(|l| l.chars().take(300).collect())
        .collect();
    assert!(leaked.is_empty(), "{leaked:#?}");
    // A path is logged once per line and cut short, never whole.
    let logged = logs::captured();
    let echoed = logged
        .lines()
        .filter(|l| l.contains(&correlation))
        .find(|l| l.contains(&"x".repeat(200)));
    assert!(echoed.is_none(), "{:?}", echoed.map(|l| &l[..300]));
    // Nothing paused: the cart and the catalog still answer.
    let product = &buyable(&t, 1).await[0].0;
    let added = shopper.add(&cart, product, 1, 1).await;
    assert_eq!(added.status, 200, "{}", added.body);
}

/// The longest URL the HTTP client builds; longer paths go over a bare
/// socket ([`raw_refused`]).
const MAX_CLIENT_URL: usize = 64 * 1024;

/// Sends `method path` as bare HTTP/1.1 (a path no client library would
/// build) and asserts the status line is a 4xx.
async fn raw_refused(t: &Api, method: &Method, path: &str) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = t.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nX-Api-Version: v1.0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    // The server may answer and close before reading it all.
    let _ = socket.write_all(head.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = socket.read_to_end(&mut answer).await;
    let status = String::from_utf8_lossy(&answer[..answer.len().min(12)]).into_owned();
    let what: String = path.chars().take(60).collect();
    assert!(
        status.starts_with("HTTP/1.1 4"),
        "{method} {what}...: {status:?}"
    );
}

/// A 4xx in the spec's shape.
async fn refused(t: &Api, what: String, request: reqwest::RequestBuilder) {
    let what: String = what.chars().take(80).collect();
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{what}: {}", e.without_url()));
    let status = response.status();
    assert!(status.is_client_error(), "{what}: {status}");
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap_or_default())
        .unwrap_or_else(|_| panic!("{what}: {status} without a JSON body"));
    assert_eq!(body["status"], status.as_u16(), "{what}: {body}");
    let _ = t;
}

#[tokio::test]
async fn every_string_field_and_path_id_is_bounded_in_memory() {
    sweep(spawn_mesh_on(Backend::Memory, NO_LIMITS).await).await;
}

#[tokio::test]
async fn every_string_field_and_path_id_is_bounded_on_redis() {
    sweep(spawn_mesh_on(Backend::Redis, NO_LIMITS).await).await;
}

/// Issue 25's attack: a customer adds lines with over-long and unknown
/// product ids as fast as the limits allow, while another customer reads
/// their cart: every read is 200 (the cart's circuit never opens).
#[tokio::test]
async fn one_customer_s_bad_lines_never_pause_another_s_cart() {
    let t = spawn_mesh_on(Backend::Memory, &[("BREAKER_THRESHOLD", "2")]).await;
    let attacker = Shopper::new(&t).await;
    let victim = Shopper::new(&t).await;
    let (bad_cart, cart) = (attacker.cart().await, victim.cart().await);
    let lines = format!("/carts/{bad_cart}/line-items");
    let attack = async {
        for i in 0..40 {
            let id = match i % 3 {
                0 => "p".repeat(10 * 1024),
                1 => "p".repeat(128),
                _ => format!("no-such-product-{i}"),
            };
            let body = json!({"productId": id, "variantId": 1, "quantity": 1});
            let reply = attacker.send(Method::POST, &lines, Some(body)).await;
            assert_eq!(reply.status, 422, "{}", reply.body);
        }
    };
    let reads = async {
        let mut statuses = Vec::new();
        for _ in 0..40 {
            let reply = victim
                .send(Method::GET, &format!("/carts/{cart}"), None)
                .await;
            statuses.push(reply.status.as_u16());
        }
        statuses
    };
    let ((), statuses) = tokio::join!(attack, reads);
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
}
