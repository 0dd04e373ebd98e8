//! Issue 49 item 4: a real MCP client (the official Python SDK,
//! `examples/agents/mcp_client.py`) shops over the MCP server at `/mcp`:
//! it lists the tools, searches, creates a session, chooses shipping,
//! completes with a test token and gets an order; a call with a version
//! the facade does not serve is the binding's error with the protocol's
//! in `data`; a wrong key is refused.

use reqwest::Method;
use serde_json::{Value, json};

use crate::acp::{
    SIGNER_KEY, SIGNER_SECRET, agents_with, example, signature, timestamp, variant_of,
};
use crate::helpers::{Backend, python, spawn_mesh_on};
use crate::journey::buyable;

fn client(base: &str, args: &[&str]) -> Vec<Value> {
    let env = [("STOREFRONT", base), ("ACP_KEY", "acp_demo_local_key")];
    let printed = python("examples/agents/mcp_client.py", args, &env);
    printed
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| s["step"] == name)
        .unwrap_or_else(|| panic!("no {name} in {steps:?}"))
}

async fn an_assistant_shops_over_mcp(backend: Backend) {
    let t = spawn_mesh_on(backend, &[]).await;
    let base = t.base.clone();
    let steps = tokio::task::spawn_blocking(move || client(&base, &[]))
        .await
        .unwrap();
    let tools = step(&steps, "tools")["names"].as_array().unwrap().len();
    assert_eq!(tools, 8, "{steps:?}");
    assert_eq!(step(&steps, "created")["status"], "ready_for_payment");
    assert_eq!(step(&steps, "updated")["option"], "express");
    let completed = step(&steps, "completed");
    assert_eq!(completed["status"], "completed");
    assert!(!completed["order"].as_str().unwrap().is_empty());
    let refused = step(&steps, "refused");
    assert_eq!(
        (refused["rpc_code"].as_i64(), refused["code"].as_str()),
        (Some(-32000), Some("unsupported_api_version")),
        "{refused}"
    );

    let base = t.base.clone();
    let wrong = tokio::task::spawn_blocking(move || client(&base, &["--wrong-key"]))
        .await
        .unwrap();
    assert_eq!(step(&wrong, "wrong-key")["refused"], true, "{wrong:?}");
    let raw = t
        .send(
            t.request(reqwest::Method::POST, "/mcp")
                .header("Authorization", "Bearer nope"),
        )
        .await;
    assert_eq!(raw.status, 401);
}

/// An agent that must sign calls a tool with `meta.signature` over the
/// REST request the call stands for, its body the payload's canonical JSON
/// (keys sorted, no spaces): accepted; the same call unsigned is refused.
#[tokio::test]
async fn a_signing_agent_signs_its_tool_calls() {
    let t = spawn_mesh_on(Backend::Memory, &[("ACP_AGENTS", &agents_with(None))]).await;
    let product = &buyable(&t, 5).await[0].0;
    let (item, _) = variant_of(&t, product).await;
    let payload = example("create_checkout_session_request", &item);
    // serde_json's maps keep their keys sorted: this is the canonical form.
    let body = serde_json::to_vec(&payload).unwrap();
    let at = timestamp(0);
    let signed = signature(
        SIGNER_SECRET,
        &at,
        &Method::POST,
        "/acp/checkout_sessions",
        &body,
    );
    let tool_call = |meta: Value| {
        let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "create_checkout_session", "arguments": {"meta": meta, "payload": payload}}});
        t.request(Method::POST, "/mcp")
            .header("Authorization", format!("Bearer {SIGNER_KEY}"))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .json(&rpc)
    };
    let meta = json!({"api_version": "2026-04-17", "idempotency_key": "mcp-signed", "timestamp": at, "signature": signed});
    let answer = t.send(tool_call(meta)).await;
    assert_eq!(
        answer.body["result"]["structuredContent"]["status"], "ready_for_payment",
        "{}",
        answer.body
    );
    let unsigned = t
        .send(tool_call(json!({"api_version": "2026-04-17"})))
        .await;
    let error = &unsigned.body["error"];
    assert_eq!(
        (error["code"].as_i64(), error["data"]["code"].as_str()),
        (Some(-32000), Some("invalid_signature")),
        "{}",
        unsigned.body
    );
}

mod over_mcp {
    use super::*;

    #[tokio::test]
    async fn memory() {
        an_assistant_shops_over_mcp(Backend::Memory).await;
    }

    #[tokio::test]
    async fn redis() {
        an_assistant_shops_over_mcp(Backend::Redis).await;
    }
}
