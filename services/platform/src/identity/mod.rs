//! Service identity: the OIDC-style identity tokens every gRPC call carries.
//!
//! - [`verifier`]: checks a token against the issuer's JWKS with algorithm,
//!   issuer and audience pinned, plus the per-service caller allow-list.
//! - [`layer`]: the tower layer that applies the verifier to every gRPC call
//!   except `grpc.health.v1.Health`.
//! - [`token_source`]: the caller side, tokens from a metadata server or
//!   from projected service-account token files, cached until shortly
//!   before expiry.
//! - [`dev_issuer`]: a local stand-in for the cloud metadata server and its
//!   JWKS, refused in production.

pub mod dev_issuer;
pub mod dev_paths;
pub mod keys;
pub mod layer;
pub mod token_source;
pub mod verifier;

use serde::{Deserialize, Serialize};

/// The issuer name of the development issuer; production refuses it.
pub const DEV_ISSUER: &str = "https://dev-issuer.storefront.invalid";

/// The claims of an identity token, as cloud providers issue them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentityClaims {
    pub iss: String,
    pub aud: Audience,
    pub sub: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub iat: u64,
    pub exp: u64,
    /// Not valid before (seconds); checked when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
}

/// `aud` as issuers write it: one audience (cloud metadata servers) or a
/// list (Kubernetes service-account tokens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

/// The verified calling service account, put into request extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub account: String,
}

#[cfg(test)]
mod tests;
