//! Webhook signatures as Stripe specifies them: the header
//! `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, each `v1`
//! an HMAC-SHA256 with the endpoint's secret over `<t>.<raw body>`; one
//! matching signature suffices (a secret being rolled signs twice), and a
//! timestamp more than `TOLERANCE_SECS` from now is refused, so a captured
//! delivery cannot be replayed later. The test provider signs its own
//! deliveries the same way.

use aws_lc_rs::hmac;
use serde::Deserialize;

use crate::error::PaymentError;
use crate::payment::Money;

/// How far a signature's timestamp may be from now (Stripe's default).
pub const TOLERANCE_SECS: i64 = 300;
/// The most a signature header may hold: a timestamp and a few signatures.
const MAX_HEADER_CHARS: usize = 1024;

/// What a webhook says happened to a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The provider's event id: a delivery repeated has the same one.
    pub id: String,
    /// `payment_intent.succeeded`, `payment_intent.amount_capturable_updated`...
    pub kind: String,
    pub payment_id: String,
    pub amount: Option<Money>,
}

fn bad(message: &str) -> PaymentError {
    PaymentError::BadSignature(message.to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn signed_payload(timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut payload = format!("{timestamp}.").into_bytes();
    payload.extend_from_slice(body);
    payload
}

/// The `Stripe-Signature` header for `body` signed with `secret` at
/// `timestamp`.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let tag = hmac::sign(&key, &signed_payload(timestamp, body));
    format!("t={timestamp},v1={}", hex(tag.as_ref()))
}

/// Checks `header` against `body` and `secret` at `now_secs`: a 400's
/// reason when it does not verify.
pub fn verify(secret: &str, header: &str, body: &[u8], now_secs: i64) -> Result<(), PaymentError> {
    if header.len() > MAX_HEADER_CHARS {
        return Err(bad("the signature header is too long"));
    }
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", sig)) => signatures.extend(unhex(sig)),
            _ => {}
        }
    }
    let timestamp = timestamp.ok_or_else(|| bad("the signature has no timestamp"))?;
    if signatures.is_empty() {
        return Err(bad("the signature has no v1 signature"));
    }
    if (now_secs - timestamp).abs() > TOLERANCE_SECS {
        return Err(bad("the signature's timestamp is outside the tolerance"));
    }
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes());
    let payload = signed_payload(timestamp, body);
    // `verify` compares in constant time.
    let matches = signatures
        .iter()
        .any(|sig| hmac::verify(&key, &payload, sig).is_ok());
    if matches {
        Ok(())
    } else {
        Err(bad("no signature matches the body"))
    }
}

#[derive(Deserialize)]
struct Envelope {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: Data,
}

#[derive(Deserialize)]
struct Data {
    object: Object,
}

#[derive(Deserialize)]
struct Object {
    id: String,
    /// `payment_intent`, `charge`, `refund`: Stripe's object type.
    object: Option<String>,
    /// A charge's or a refund's payment.
    payment_intent: Option<String>,
    amount: Option<i64>,
    currency: Option<String>,
}

/// The event in a verified body (Stripe's event object).
pub fn parse(body: &[u8]) -> Result<Event, PaymentError> {
    let envelope: Envelope = serde_json::from_slice(body)
        .map_err(|_| PaymentError::Invalid("not a payment event".into()))?;
    let object = envelope.data.object;
    let amount = match (object.amount, object.currency) {
        (Some(amount), Some(currency)) => Some(Money {
            currency: currency.to_ascii_uppercase(),
            amount,
        }),
        _ => None,
    };
    // A charge's or refund's event is about the payment it belongs to.
    let payment_id = match (object.object.as_deref(), object.payment_intent) {
        (Some("charge" | "refund"), Some(intent)) => intent,
        _ => object.id,
    };
    Ok(Event {
        id: envelope.id,
        kind: envelope.kind,
        payment_id,
        amount,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_test_secret";
    const BODY: &[u8] = br#"{"id":"evt_1","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1","amount":4995,"currency":"aud"}}}"#;

    #[test]
    fn a_signature_made_with_the_secret_verifies_and_its_event_reads() {
        let header = sign(SECRET, 1_000, BODY);
        assert!(header.starts_with("t=1000,v1="));
        assert_eq!(verify(SECRET, &header, BODY, 1_100), Ok(()));
        let event = parse(BODY).expect("an event");
        assert_eq!(
            (event.id.as_str(), event.payment_id.as_str()),
            ("evt_1", "pi_1")
        );
        let money = event.amount.expect("an amount");
        assert_eq!((money.currency.as_str(), money.amount), ("AUD", 4995));
    }

    #[test]
    fn a_rolled_secret_signs_twice_and_either_verifies() {
        let old = sign("whsec_old", 1_000, BODY);
        let new = sign(SECRET, 1_000, BODY);
        let both = format!("{new},v1={}", old.split("v1=").nth(1).unwrap());
        assert_eq!(verify(SECRET, &both, BODY, 1_000), Ok(()));
        assert_eq!(verify("whsec_old", &both, BODY, 1_000), Ok(()));
    }

    #[test]
    fn anything_else_is_refused() {
        let header = sign(SECRET, 1_000, BODY);
        let refused = |h: &str, body: &[u8], now: i64| verify(SECRET, h, body, now).is_err();
        assert!(refused(&header, b"{}", 1_000), "another body");
        assert!(refused(&header, BODY, 1_000 + TOLERANCE_SECS + 1), "stale");
        assert!(
            refused(&header, BODY, 1_000 - TOLERANCE_SECS - 1),
            "from the future"
        );
        assert!(
            refused(&sign("whsec_other", 1_000, BODY), BODY, 1_000),
            "another secret"
        );
        assert!(refused("v1=abcd", BODY, 1_000), "no timestamp");
        assert!(refused("t=1000", BODY, 1_000), "no signature");
        assert!(refused("t=1000,v1=zz", BODY, 1_000), "not hex");
        assert!(refused(&"t=1000,".repeat(500), BODY, 1_000), "too long");
        assert!(parse(b"[1,2]").is_err());
    }

    #[test]
    fn a_charge_s_event_is_about_its_payment() {
        let body = br#"{"id":"evt_2","type":"charge.refunded","data":{"object":{"id":"ch_1","object":"charge","payment_intent":"pi_9","amount":100,"currency":"aud"}}}"#;
        assert_eq!(parse(body).expect("an event").payment_id, "pi_9");
    }
}
