//! Where the dev issuer answers, as the metadata server it stands in for
//! does: what the topology and the issuer both need to know.

/// The path (after the base URL) of the metadata identity endpoint.
pub const IDENTITY_PATH_PREFIX: &str = "/computeMetadata/v1/instance/service-accounts";
pub const JWKS_PATH: &str = "/oauth2/v3/certs";

/// The identity-token URL of `account` at the issuer served at `base`.
pub fn account_url(base: &str, account: &str) -> String {
    format!("{base}{IDENTITY_PATH_PREFIX}/{account}/identity")
}
