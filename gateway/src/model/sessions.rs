//! A customer's sessions and the password change.

use serde::{Deserialize, Serialize};
use storefront_proto::customers::v1 as pb;
use utoipa::ToSchema;

use crate::model::common::timestamp;

/// One open session of the customer.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerSession {
    /// The session's id (the `sid` of its tokens).
    pub id: String,
    #[schema(example = "2026-11-26T09:30:00Z")]
    pub created_at: String,
    /// The last login or token refresh in the session.
    #[schema(example = "2026-11-26T09:45:00Z")]
    pub last_used_at: String,
    /// The client's User-Agent at login (at most 256 characters; empty if
    /// it sent none).
    pub user_agent: String,
    /// Whether this is the session of the token that asked.
    pub current: bool,
}

impl From<pb::SessionInfo> for CustomerSession {
    fn from(s: pb::SessionInfo) -> Self {
        Self {
            id: s.id,
            created_at: timestamp(s.created_at),
            last_used_at: timestamp(s.last_used_at),
            user_agent: s.user_agent,
            current: s.current,
        }
    }
}

/// The body of `PUT /customers/me/password`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordBody {
    /// The password now; a wrong one is 422 on `currentPassword`.
    #[schema(required = true, value_type = String, min_length = 1)]
    pub current_password: Option<String>,
    /// As at sign-up: 10 to 128 characters, not the email address, not one
    /// character repeated, not a run of consecutive characters.
    #[schema(
        required = true,
        value_type = String,
        min_length = 10,
        max_length = 128,
        pattern = r"^(?!(.)\1*$)"
    )]
    pub new_password: Option<String>,
}
