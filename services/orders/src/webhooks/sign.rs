//! Standard Webhooks signatures (standardwebhooks.com): HMAC-SHA256 of
//! `{webhook-id}.{webhook-timestamp}.{body}` under the secret's bytes
//! (`whsec_` then base64), sent as `v1,<base64>`.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

const PREFIX: &str = "whsec_";

/// A signing secret: `whsec_` and the base64 of at least 24 bytes.
#[derive(Clone)]
pub struct Secret(hmac::Key);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        let encoded = text.strip_prefix(PREFIX).ok_or("must start with whsec_")?;
        let bytes = STANDARD
            .decode(encoded.trim_end_matches('='))
            .or_else(|_| {
                base64::engine::general_purpose::STANDARD_NO_PAD
                    .decode(encoded.trim_end_matches('='))
            })
            .map_err(|_| "must be whsec_ then base64")?;
        if bytes.len() < 24 {
            return Err("must hold at least 24 bytes (32 advised)");
        }
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, &bytes)))
    }

    /// The `webhook-signature` header of a message.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.0);
        context.update(id.as_bytes());
        context.update(b".");
        context.update(timestamp.to_string().as_bytes());
        context.update(b".");
        context.update(body);
        format!("v1,{}", STANDARD.encode(context.sign().as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_the_specification_s_example() {
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_is_whsec_and_enough_base64() {
        assert!(Secret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_err());
        assert!(Secret::parse("whsec_not base64!").is_err());
        assert!(Secret::parse("whsec_c2hvcnQ=").is_err(), "5 bytes");
    }
}
