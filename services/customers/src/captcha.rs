//! Captcha verification behind one type: the dev verifier accepts any
//! non-empty response; the reCAPTCHA verifier asks `siteverify`. Rejected:
//! 422 on `gRecaptchaResponse`; verifier unreachable: 503, never a pass.

use std::time::Duration;
use storefront_proto::error::codes;

use serde::Deserialize;
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::secret_files::{Followed, Swap};

use crate::config::CaptchaConfig;

/// The REST field the response arrives in.
pub const FIELD: &str = "gRecaptchaResponse";

#[derive(Deserialize)]
struct SiteVerify {
    success: bool,
    #[serde(default)]
    hostname: Option<String>,
    #[serde(default)]
    score: Option<f64>,
}

pub struct Captcha {
    config: CaptchaConfig,
    /// reCAPTCHA's secret as last taken (its file followed: `follow`).
    secret: Swap<String>,
    http: reqwest::Client,
}

fn rejected(message: &str) -> ServiceError {
    ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        "the captcha was not accepted",
    )
    .with_violation(FieldViolation::new(FIELD, codes::INVALID_VALUE, message))
}

impl Captcha {
    pub fn new(config: CaptchaConfig) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        let secret = match &config {
            CaptchaConfig::Recaptcha { secret, .. } => secret.expose().to_string(),
            CaptchaConfig::Dev => String::new(),
        };
        Self {
            config,
            secret: Swap::new(secret),
            http,
        }
    }

    /// reCAPTCHA's secret file, when it came from one.
    pub fn follow(&self) -> Option<Followed> {
        let CaptchaConfig::Recaptcha { secret, .. } = &self.config else {
            return None;
        };
        let swap = self.secret.clone();
        let take = move |text: &str| {
            swap.set(text.to_string());
            Ok(())
        };
        Followed::of("RECAPTCHA_SECRET", secret, Box::new(take))
    }

    pub async fn verify(&self, response: &str) -> Result<(), ServiceError> {
        if response.trim().is_empty() {
            return Err(ServiceError::new(
                ErrorKind::Validation,
                codes::VALIDATION_ERROR,
                "a captcha response is required",
            )
            .with_violation(FieldViolation::new(
                FIELD,
                codes::REQUIRED,
                "solve the captcha",
            )));
        }
        let CaptchaConfig::Recaptcha {
            verify_url,
            hostnames,
            min_score,
            ..
        } = &self.config
        else {
            return Ok(());
        };
        let unavailable = |e: reqwest::Error| {
            tracing::warn!(error = %e.without_url(), "captcha verifier unreachable");
            ServiceError::new(
                ErrorKind::Unavailable,
                "CAPTCHA_UNAVAILABLE",
                "captcha verification is unavailable",
            )
        };
        let reply: SiteVerify = self
            .http
            .post(verify_url)
            .form(&[
                ("secret", self.secret.get().as_str()),
                ("response", response),
            ])
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(unavailable)?
            .json()
            .await
            .map_err(unavailable)?;
        if !reply.success {
            return Err(rejected("the captcha response was rejected"));
        }
        if !hostnames.is_empty()
            && !reply
                .hostname
                .as_ref()
                .is_some_and(|h| hostnames.contains(h))
        {
            return Err(rejected("the captcha was solved on another site"));
        }
        if reply.score.is_some_and(|score| score < *min_score) {
            return Err(rejected("the captcha score is too low"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use axum::routing::post;
    use axum::{Form, Json, Router};
    use storefront_platform::env::Secret;

    use super::*;

    /// A stand-in for siteverify: `good` passes on shop.example with 0.9,
    /// `low` scores 0.1, `elsewhere` comes from another host.
    async fn siteverify(
        Form(form): Form<std::collections::HashMap<String, String>>,
    ) -> Json<serde_json::Value> {
        assert_eq!(form.get("secret").map(String::as_str), Some("test-secret"));
        Json(match form.get("response").map(String::as_str) {
            Some("good") => {
                serde_json::json!({"success": true, "hostname": "shop.example", "score": 0.9})
            }
            Some("low") => {
                serde_json::json!({"success": true, "hostname": "shop.example", "score": 0.1})
            }
            Some("elsewhere") => serde_json::json!({"success": true, "hostname": "evil.example"}),
            _ => serde_json::json!({"success": false, "error-codes": ["invalid-input-response"]}),
        })
    }

    async fn server() -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(
                listener,
                Router::new().route("/siteverify", post(siteverify)),
            )
            .await
        });
        addr
    }

    fn recaptcha(url: String) -> Captcha {
        Captcha::new(CaptchaConfig::Recaptcha {
            verify_url: url,
            secret: Secret::new("test-secret"),
            hostnames: vec!["shop.example".into()],
            min_score: 0.5,
        })
    }

    fn field_code(e: ServiceError) -> (ErrorKind, String, String) {
        let v = &e.violations[0];
        (e.kind, v.field.clone(), v.code.to_string())
    }

    #[tokio::test]
    async fn recaptcha_answers_decide() {
        let captcha = recaptcha(format!("http://{}/siteverify", server().await));
        captcha.verify("good").await.unwrap();
        for bad in ["bogus", "low", "elsewhere"] {
            let e = captcha.verify(bad).await.unwrap_err();
            assert_eq!(
                field_code(e),
                (ErrorKind::Validation, FIELD.into(), "INVALID_VALUE".into()),
                "{bad}"
            );
        }
        let e = captcha.verify("").await.unwrap_err();
        assert_eq!(field_code(e).2, "REQUIRED");
    }

    #[tokio::test]
    async fn an_unreachable_verifier_is_unavailable_never_a_pass() {
        // Bound but never listening: refused, and no one else can take it.
        let held = tokio::net::TcpSocket::new_v4().unwrap();
        held.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = held.local_addr().unwrap().port();
        let captcha = recaptcha(format!("http://127.0.0.1:{port}/siteverify"));
        let e = captcha.verify("good").await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unavailable);
    }

    #[tokio::test]
    async fn the_dev_verifier_wants_only_a_response() {
        let captcha = Captcha::new(CaptchaConfig::Dev);
        captcha.verify("anything").await.unwrap();
        assert!(captcha.verify(" ").await.is_err());
    }
}
