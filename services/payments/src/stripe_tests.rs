//! What the Stripe provider sends, read by a recording HTTP server of the
//! test's own (Stripe's API itself is out of reach here; localstripe, in
//! the end-to-end tests, predates shared payment tokens).

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::payment::Money;
use crate::provider::PaymentProvider;
use crate::stripe::StripeProvider;

const INTENT: &str = r#"{"id":"pi_1","amount":4995,"currency":"usd","status":"requires_capture","amount_received":0,"metadata":{"reference":"cs-1"}}"#;

/// Each request's line and body; every answer is `INTENT`.
async fn recorder() -> (String, Arc<Mutex<Vec<(String, String)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut raw = Vec::new();
            let mut chunk = [0u8; 4096];
            let (head, body) = loop {
                let n = socket.read(&mut chunk).await.unwrap_or(0);
                raw.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&raw).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if body.len() >= length || n == 0 {
                        break (head.to_string(), body.to_string());
                    }
                } else if n == 0 {
                    break (text, String::new());
                }
            };
            let line = head.lines().next().unwrap_or_default().to_string();
            sink.lock().unwrap().push((line, body));
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{INTENT}",
                INTENT.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    (base, seen)
}

fn usd() -> Money {
    Money {
        amount: 4995,
        currency: "USD".into(),
    }
}

#[tokio::test]
async fn a_shared_payment_token_confirms_as_payment_method_data() {
    let (base, seen) = recorder().await;
    let stripe = StripeProvider::new(&base, "sk_test_x", "whsec_x");
    let paid = stripe
        .create(usd(), "cs-1", "key-1", Some("spt_123"))
        .await
        .unwrap();
    assert_eq!(paid.id, "pi_1");
    let seen = seen.lock().unwrap().clone();
    let lines: Vec<&str> = seen.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        lines,
        [
            "POST /v1/payment_intents HTTP/1.1",
            "POST /v1/payment_intents/pi_1/confirm HTTP/1.1"
        ],
        "no update with a payment_method: {seen:?}"
    );
    assert_eq!(
        seen[1].1,
        "payment_method_data%5Bshared_payment_granted_token%5D=spt_123"
    );
}

#[tokio::test]
async fn a_payment_method_is_set_then_confirmed() {
    let (base, seen) = recorder().await;
    let stripe = StripeProvider::new(&base, "sk_test_x", "whsec_x");
    stripe
        .confirm("pi_1", "pm_card_visa", "key-2")
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[0],
        (
            "POST /v1/payment_intents/pi_1 HTTP/1.1".to_string(),
            "payment_method=pm_card_visa".to_string()
        )
    );
    assert_eq!(seen[1].0, "POST /v1/payment_intents/pi_1/confirm HTTP/1.1");
}
