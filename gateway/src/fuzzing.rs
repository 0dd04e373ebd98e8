//! Entry points for the cargo-fuzz targets in `fuzz/`: the gateway's own
//! handling of what a client sends (query strings, JSON bodies, customer
//! tokens), callable without a server. None may ever panic, whatever the
//! input; errors are the expected answer to most of it.

use std::sync::OnceLock;

use jsonwebtoken::jwk::JwkSet;
use serde::de::DeserializeOwned;
use storefront_platform::store::Store;
use storefront_proto::customers::v1 as pb;

use crate::bff_token::{CustomerAuth, p256_jwk};
use crate::model::cart::{
    AddLineItemBody, CheckoutBody, CreateCartBody, QuantityBody, UpdateCartBody,
};
use crate::model::customers::{
    AddressBody, LoginBody, LogoutBody, PreferencesBody, ProfileBody, SignUpBody, TokenBody,
};
use crate::model::orders::StatusBody;
use crate::query::spec::{ADDRESSES, CATEGORIES, COLLECTIONS, ORDERS, PRODUCTS};

/// A query string as every collection endpoint and search read it.
pub fn query_string(raw: &str) {
    let _ = crate::middleware::raw_request::check_query(raw);
    for spec in [&PRODUCTS, &CATEGORIES, &COLLECTIONS, &ADDRESSES, &ORDERS] {
        let _ = crate::query::parse(Some(raw), spec);
    }
    let _ = crate::routes::params::text(Some(raw));
    let _ = crate::routes::params::locale(Some(raw));
}

fn body<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    serde_json::from_slice(bytes).ok()
}

/// A request body as every JSON endpoint reads it, then as it is turned
/// into a downstream request.
pub fn json_bodies(bytes: &[u8]) {
    if let Some(b) = body::<LoginBody>(bytes) {
        let _ = crate::ratelimit::normalise(b.email_address.as_deref().unwrap_or_default());
        let _ = pb::LoginRequest::from(b);
    }
    if let Some(b) = body::<SignUpBody>(bytes) {
        let _ = pb::SignUpRequest::from(b);
    }
    if let Some(b) = body::<AddressBody>(bytes) {
        let _ = pb::AddressInput::from(b);
    }
    if let Some(b) = body::<PreferencesBody>(bytes) {
        let _ = pb::Preferences::from(b);
    }
    let _ = body::<TokenBody>(bytes);
    let _ = body::<LogoutBody>(bytes);
    let _ = body::<ProfileBody>(bytes);
    let _ = body::<CreateCartBody>(bytes);
    let _ = body::<UpdateCartBody>(bytes);
    let _ = body::<AddLineItemBody>(bytes);
    let _ = body::<QuantityBody>(bytes);
    let _ = body::<CheckoutBody>(bytes);
    let _ = body::<StatusBody>(bytes);
}

/// The public half of a P-256 key (no private key exists anywhere): tokens
/// naming `kid: fuzz` reach signature checking, which they then fail.
const FUZZ_X: &str = "WmDuPojfxT_3GPhPCgCSG75QIOtmtMwlCrVCBQsU3c0";
const FUZZ_Y: &str = "pyozLwKYo69u4nAbir_CVou-ERvgJ471dXmVp8k-v7M";

struct TokenCheck {
    runtime: tokio::runtime::Runtime,
    auth: CustomerAuth,
}

fn token_check() -> &'static TokenCheck {
    static CHECK: OnceLock<TokenCheck> = OnceLock::new();
    CHECK.get_or_init(|| TokenCheck {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime"),
        auth: CustomerAuth::new("storefront-customers", "storefront-bff", Store::memory()),
    })
}

/// An `X-BFF-Token` as the gateway verifies it (not revocation, which is a
/// store lookup by the verified claims).
pub fn customer_token(token: &str) {
    let check = token_check();
    let keys = || async {
        Ok(JwkSet {
            keys: vec![p256_jwk("fuzz".into(), FUZZ_X.into(), FUZZ_Y.into())],
        })
    };
    let _ = check.runtime.block_on(check.auth.claims(token, keys));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fuzz_entry_points_take_anything() {
        for raw in [
            "",
            "limit=5&sort=price:desc",
            "filter[price][gt]=%FF",
            "&&=&",
        ] {
            query_string(raw);
        }
        for bytes in [&b"{}"[..], br#"{"emailAddress": 5}"#, b"[[[[", b"\xff"] {
            json_bodies(bytes);
        }
        let header = "eyJhbGciOiJFUzI1NiIsImtpZCI6ImZ1enoifQ";
        for token in ["", "a.b.c", &format!("{header}.e30.AAAA")] {
            customer_token(token);
        }
    }
}
