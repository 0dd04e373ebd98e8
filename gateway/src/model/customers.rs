//! Accounts, sessions, profiles, addresses and preferences as JSON.
//!
//! Request bodies take every field as optional so that the customers service
//! can answer one 422 naming every missing or bad field at once.

use serde::{Deserialize, Serialize};
use storefront_proto::customers::v1 as pb;
use utoipa::ToSchema;

use super::bounded::Id;
use super::common::Meta;
use crate::error::ApiError;

fn text(v: Option<String>) -> String {
    v.unwrap_or_default()
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginBody {
    /// Not blank; at most 254 characters once trimmed.
    #[schema(required = true, value_type = String, min_length = 1, max_length = 254, pattern = r"\S")]
    pub email_address: Option<String>,
    /// Not empty. Any other value is checked against the account, so a
    /// wrong one is 401, never a field error.
    #[schema(required = true, value_type = String, min_length = 1)]
    pub password: Option<String>,
    /// The reCAPTCHA response token.
    #[serde(rename = "gRecaptchaResponse")]
    #[schema(required = true, value_type = String, min_length = 1, pattern = r"\S")]
    pub g_recaptcha_response: Option<String>,
}

impl From<LoginBody> for pb::LoginRequest {
    fn from(b: LoginBody) -> Self {
        Self {
            email_address: text(b.email_address),
            password: text(b.password),
            captcha_response: text(b.g_recaptcha_response),
            // From the request's header (`routes::auth::login`).
            user_agent: String::new(),
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignUpBody {
    #[schema(required = true, value_type = String, max_length = 254, format = Email)]
    pub email_address: Option<String>,
    /// 10 to 128 characters, not the email address, not one character
    /// repeated, not a run of consecutive characters (`1234567890`). No
    /// composition rule (NIST SP 800-63B): length makes a password strong.
    #[schema(
        required = true,
        value_type = String,
        min_length = 10,
        max_length = 128,
        pattern = r"^(?!(.)\1*$)"
    )]
    pub password: Option<String>,
    /// Up to 100 characters with something visible, no control or bidi
    /// characters.
    // `<name>` is completed by `openapi::patterns`.
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub first_name: Option<String>,
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub last_name: Option<String>,
    #[serde(rename = "gRecaptchaResponse")]
    #[schema(required = true, value_type = String, min_length = 1, pattern = r"\S")]
    pub g_recaptcha_response: Option<String>,
}

impl From<SignUpBody> for pb::SignUpRequest {
    fn from(b: SignUpBody) -> Self {
        Self {
            email_address: text(b.email_address),
            password: text(b.password),
            first_name: text(b.first_name),
            last_name: text(b.last_name),
            captcha_response: text(b.g_recaptcha_response),
        }
    }
}

/// The answer to a sign-up: the same whether the address was new or
/// already had an account (its owner is told by mail), so it reveals
/// nothing about who has an account.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignUpAccepted {
    /// The address as it will be used, trimmed and lower-cased.
    pub email_address: String,
    #[schema(example = "Check your email to continue; a new account can log in now.")]
    pub message: &'static str,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenBody {
    /// Always `refresh_token`.
    #[schema(required = true, value_type = String, pattern = "^refresh_token$")]
    pub grant_type: Option<String>,
    /// The refresh token of the last login or refresh; not empty.
    #[schema(required = true, value_type = Id)]
    pub refresh_token: Option<Id>,
}

/// The optional body of `POST /auth/logout`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogoutBody {
    /// Ends this refresh token's session too, even when the access token has
    /// expired (or none is sent).
    #[schema(value_type = Option<Id>)]
    pub refresh_token: Option<Id>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerSummary {
    pub id: String,
    pub email_address: String,
    pub first_name: String,
    pub last_name: String,
}

impl From<pb::CustomerSummary> for CustomerSummary {
    fn from(c: pb::CustomerSummary) -> Self {
        Self {
            id: c.id,
            email_address: c.email_address,
            first_name: c.first_name,
            last_name: c.last_name,
        }
    }
}

/// A login's answer: an access token for `X-BFF-Token`, and a refresh token.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResult {
    /// ES256 JWT; send it as `X-BFF-Token`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Access token validity in seconds.
    pub expires_in: i64,
    /// Opaque, single use: exchange it at `POST /auth/token` for a new pair.
    pub refresh_token: String,
    /// The customer logged in; absent for a guest's session (`POST
    /// /auth/guest`, and its refreshes), whose access token works for carts
    /// and checkout only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<CustomerSummary>,
    /// A login with a guest's token in `X-BFF-Token`: what merging the
    /// guest's cart did (the guest's token stops working).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_report: Option<crate::model::merge::MergeReport>,
}

impl From<pb::Session> for LoginResult {
    fn from(s: pb::Session) -> Self {
        Self {
            access_token: s.access_token,
            token_type: s.token_type,
            expires_in: s.expires_in,
            refresh_token: s.refresh_token,
            customer: s.customer.map(CustomerSummary::from),
            merge_report: None,
        }
    }
}

fn optional(s: String) -> Option<String> {
    Some(s).filter(|s| !s.is_empty())
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerProfile {
    #[serde(flatten)]
    pub meta: Meta,
    pub email_address: String,
    pub first_name: String,
    pub last_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// YYYY-MM-DD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_of_birth: Option<String>,
    /// The default address, if one is marked `isDefault`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_shipping_address_id: Option<String>,
}

impl TryFrom<pb::Customer> for CustomerProfile {
    type Error = ApiError;
    fn try_from(c: pb::Customer) -> Result<Self, ApiError> {
        Ok(Self {
            meta: Meta::from_proto(c.meta)?,
            email_address: c.email_address,
            first_name: c.first_name,
            last_name: c.last_name,
            phone: optional(c.phone),
            date_of_birth: optional(c.date_of_birth),
            default_shipping_address_id: optional(c.default_shipping_address_id),
        })
    }
}

/// `PUT /customers/me`: the whole editable profile. `emailAddress`, `id` and
/// timestamps are read-only and ignored if sent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileBody {
    /// The `version` read (versions start at 1); a stale one is 409
    /// CONCURRENT_MODIFICATION.
    #[schema(required = true, value_type = i64, minimum = 1)]
    pub version: Option<i64>,
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub first_name: Option<String>,
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub last_name: Option<String>,
    /// 6 to 15 digits, spaces and hyphens between them, optionally a
    /// leading `+` (E.164 as people type it); empty clears it.
    #[schema(value_type = Option<String>, pattern = r"^(\+?[ -]*([0-9][ -]*){6,15})?$")]
    pub phone: Option<String>,
    /// A date, YYYY-MM-DD, from 1900-01-01 to today; empty clears it. (The
    /// pattern states a part of that JSON Schema can express: 1900 to 2019,
    /// without 29 February.)
    #[schema(
        value_type = Option<String>,
        pattern = r"^((19[0-9]{2}|20[01][0-9])-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8])))?$"
    )]
    pub date_of_birth: Option<String>,
}

impl ProfileBody {
    pub fn into_request(self, customer_id: String) -> pb::UpdateCustomerRequest {
        pb::UpdateCustomerRequest {
            customer_id,
            version: self.version.unwrap_or(0),
            first_name: text(self.first_name),
            last_name: text(self.last_name),
            phone: text(self.phone),
            date_of_birth: text(self.date_of_birth),
        }
    }
}

/// A postal address as a client sends it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressFields {
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub first_name: Option<String>,
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub last_name: Option<String>,
    #[schema(required = true, value_type = String, max_length = 200, pattern = "<name>")]
    pub street_name: Option<String>,
    #[schema(value_type = Option<String>, max_length = 20, pattern = "<optional text>")]
    pub street_number: Option<String>,
    #[schema(required = true, value_type = String, max_length = 100, pattern = "<name>")]
    pub city: Option<String>,
    #[schema(required = true, value_type = String, max_length = 20, pattern = "<name>")]
    pub postal_code: Option<String>,
    #[schema(value_type = Option<String>, max_length = 100, pattern = "<optional text>")]
    pub state: Option<String>,
    /// ISO 3166-1 alpha-2, e.g. AU.
    #[schema(required = true, value_type = String, pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    /// ISO 3166-2 of `country`, e.g. US-CA: the region a market may tax by
    /// (docs/markets.md).
    #[schema(value_type = Option<String>, pattern = "^[A-Za-z]{2}-[A-Za-z0-9]{1,3}$")]
    pub region: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddressBody {
    #[serde(flatten)]
    pub fields: AddressFields,
    /// Making an address the default clears the flag on the others.
    pub is_default: Option<bool>,
}

impl From<AddressFields> for pb::AddressInput {
    fn from(b: AddressFields) -> Self {
        Self {
            first_name: text(b.first_name),
            last_name: text(b.last_name),
            street_name: text(b.street_name),
            street_number: text(b.street_number),
            city: text(b.city),
            postal_code: text(b.postal_code),
            state: text(b.state),
            country: text(b.country),
            is_default: false,
            region: text(b.region),
        }
    }
}

impl From<AddressBody> for pb::AddressInput {
    fn from(b: AddressBody) -> Self {
        Self {
            is_default: b.is_default.unwrap_or(false),
            ..b.fields.into()
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Address {
    #[serde(flatten)]
    pub meta: Meta,
    pub first_name: String,
    pub last_name: String,
    pub street_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub street_number: Option<String>,
    pub city: String,
    pub postal_code: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    pub country: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    pub is_default: bool,
}

impl TryFrom<pb::Address> for Address {
    type Error = ApiError;
    fn try_from(a: pb::Address) -> Result<Self, ApiError> {
        let f = a
            .fields
            .ok_or_else(|| ApiError::bad_gateway("address without fields"))?;
        Ok(Self {
            meta: Meta::from_proto(a.meta)?,
            first_name: f.first_name,
            last_name: f.last_name,
            street_name: f.street_name,
            street_number: optional(f.street_number),
            city: f.city,
            postal_code: f.postal_code,
            state: optional(f.state),
            country: f.country,
            region: optional(f.region),
            is_default: f.is_default,
        })
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preferences {
    /// xx-XX, e.g. en-AU.
    pub preferred_locale: String,
    /// One of the shop's currencies (`GET /markets`).
    pub preferred_currency: String,
    pub marketing_emails: bool,
}

impl From<pb::Preferences> for Preferences {
    fn from(p: pb::Preferences) -> Self {
        Self {
            preferred_locale: p.preferred_locale,
            preferred_currency: p.preferred_currency,
            marketing_emails: p.marketing_emails,
        }
    }
}

/// `PUT /customers/me/preferences`: the whole preferences object.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreferencesBody {
    #[schema(required = true, value_type = String, pattern = "^[a-z]{2}-[A-Z]{2}$")]
    pub preferred_locale: Option<String>,
    /// One of the shop's currencies (`GET /markets`).
    #[schema(required = true, value_type = String, pattern = "^[A-Z]{3}$")]
    pub preferred_currency: Option<String>,
    pub marketing_emails: Option<bool>,
}

impl From<PreferencesBody> for pb::Preferences {
    fn from(b: PreferencesBody) -> Self {
        Self {
            preferred_locale: text(b.preferred_locale),
            preferred_currency: text(b.preferred_currency),
            marketing_emails: b.marketing_emails.unwrap_or(false),
        }
    }
}
