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
    /// `guest` for a guest's token (carts and checkout only); absent for
    /// a customer's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// The scope of a guest's tokens.
pub const GUEST_SCOPE: &str = "guest";

impl CustomerClaims {
    pub fn is_guest(&self) -> bool {
        self.scope.as_deref() == Some(GUEST_SCOPE)
    }
}

/// Store key marking a revoked access token.
pub fn revoked_token_key(jti: &str) -> String {
    format!("revoked:jti:{jti}")
}

/// Store key marking a revoked session.
pub fn revoked_session_key(sid: &str) -> String {
    format!("revoked:sid:{sid}")
}

/// ECDSA signatures are malleable: with (r, s) valid, so is (r, n - s),
/// which gives a second token string with the same claims. Tokens are
/// issued with the low S (s <= n/2) and only that form is accepted, so a
/// token has exactly one spelling.
pub mod low_s {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    /// The order n of P-256's group, big-endian.
    const N: [u8; 32] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63,
        0x25, 0x51,
    ];
    /// n / 2, rounded down.
    const HALF_N: [u8; 32] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31,
        0x92, 0xA8,
    ];

    /// The signature (r || s, 64 bytes) of a compact JWS.
    fn signature(token: &str) -> Option<[u8; 64]> {
        let encoded = token.rsplit_once('.')?.1;
        let bytes = URL_SAFE_NO_PAD.decode(encoded).ok()?;
        bytes.try_into().ok()
    }

    fn s_is_low(sig: &[u8; 64]) -> bool {
        sig[32..] <= HALF_N[..]
    }

    /// Whether `token` carries an ES256 signature in its low-S form.
    pub fn is_low(token: &str) -> bool {
        signature(token).is_some_and(|sig| s_is_low(&sig))
    }

    /// `token` with its signature's S made low: the same signature.
    pub fn normalise(token: String) -> String {
        if is_low(&token) { token } else { flip(&token) }
    }

    /// `token` with the other form of its signature, (r, n - s): valid if
    /// `token` is. Empty for a token without an ES256 signature.
    pub fn flip(token: &str) -> String {
        let (Some(mut sig), Some((head, _))) = (signature(token), token.rsplit_once('.')) else {
            return String::new();
        };
        // s := n - s, big-endian with borrow (0 < s < n: no underflow).
        let mut borrow = 0i16;
        for i in (0..32).rev() {
            let d = i16::from(N[i]) - i16::from(sig[32 + i]) - borrow;
            borrow = i16::from(d < 0);
            sig[32 + i] = (d + (borrow << 8)) as u8;
        }
        format!("{head}.{}", URL_SAFE_NO_PAD.encode(sig))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn token_with_s(s: [u8; 32]) -> String {
            let mut sig = [7u8; 64];
            sig[32..].copy_from_slice(&s);
            format!("h.p.{}", URL_SAFE_NO_PAD.encode(sig))
        }

        #[test]
        fn a_high_s_becomes_n_minus_s() {
            let mut one = [0u8; 32];
            one[31] = 1;
            assert!(is_low(&token_with_s(one)));
            assert!(is_low(&token_with_s(HALF_N)));
            // n - 1 is high; n - (n - 1) = 1.
            let mut n_minus_one = N;
            n_minus_one[31] -= 1;
            let high = token_with_s(n_minus_one);
            assert!(!is_low(&high));
            assert_eq!(normalise(high.clone()), token_with_s(one));
            assert_eq!(flip(&token_with_s(one)), high);
            assert!(!is_low("not.a.token"));
        }
    }
}
