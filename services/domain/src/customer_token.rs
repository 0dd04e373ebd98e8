//! The claims of customer access tokens: signed by the customers service,
//! verified by the gateway. `sid` names the login session (the refresh-token
//! family), so revoking a session revokes its access tokens too.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CustomerClaims {
    pub iss: String,
    pub aud: String,
    /// The customer id.
    pub sub: String,
    /// This token's id, for revocation on logout.
    pub jti: String,
    /// The session (refresh family) id.
    pub sid: String,
    pub iat: u64,
    pub exp: u64,
}

/// Store key marking a revoked access token.
pub fn revoked_token_key(jti: &str) -> String {
    format!("revoked:jti:{jti}")
}

/// Store key marking a revoked session.
pub fn revoked_session_key(sid: &str) -> String {
    format!("revoked:sid:{sid}")
}
