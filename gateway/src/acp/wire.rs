//! The protocol's JSON (`spec/2026-04-17/json-schema/schema.agentic_checkout.json`),
//! as much of it as the facade reads and writes. Requests are read
//! leniently (fields the facade does not use, like `order_notes` in the
//! protocol's own examples, are ignored); answers hold to the schema.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// `Error`: the protocol's error body.
#[derive(Debug, Serialize)]
pub struct AcpError {
    #[serde(skip)]
    pub status: StatusCode,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
}

impl AcpError {
    /// `invalid_request` for a 4xx; `processing_error`, or
    /// `service_unavailable` for a 503, otherwise.
    pub fn with_status(
        status: StatusCode,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let kind = match status.as_u16() {
            503 => "service_unavailable",
            500..=599 => "processing_error",
            _ => "invalid_request",
        };
        AcpError {
            status,
            kind,
            code: code.into(),
            message: message.into(),
            param: None,
        }
    }

    pub fn invalid(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self::with_status(status, code, message)
    }

    pub fn processing() -> Self {
        Self::with_status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "processing_error",
            "the request could not be processed",
        )
    }

    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }
}

impl IntoResponse for AcpError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(&self)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            let bearer = axum::http::HeaderValue::from_static("Bearer");
            response
                .headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, bearer);
        }
        response
    }
}

/// `Item` of a request: an id of the facade's (`{productId}:{variantId}`,
/// as the feed names them) and a quantity (1 when left out).
#[derive(Debug, Clone, Deserialize)]
pub struct ItemIn {
    pub id: String,
    #[serde(default)]
    pub quantity: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Address {
    pub name: String,
    pub line_one: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_two: Option<String>,
    pub city: String,
    #[serde(default)]
    pub state: String,
    pub country: String,
    pub postal_code: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct FulfillmentDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Address>,
}

/// A chosen fulfillment option: shipping is the one kind offered.
#[derive(Debug, Clone, Deserialize)]
pub struct SelectedIn {
    pub option_id: String,
}

#[derive(Debug, Default, Deserialize)]
pub struct CreateIn {
    #[serde(default)]
    pub line_items: Vec<ItemIn>,
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub fulfillment_details: Option<FulfillmentDetails>,
    #[serde(default)]
    pub selected_fulfillment_options: Vec<SelectedIn>,
}

#[derive(Debug, Default, Deserialize)]
pub struct UpdateIn {
    #[serde(default)]
    pub line_items: Option<Vec<ItemIn>>,
    #[serde(default)]
    pub fulfillment_details: Option<FulfillmentDetails>,
    #[serde(default)]
    pub selected_fulfillment_options: Vec<SelectedIn>,
}

#[derive(Debug, Deserialize)]
pub struct Credential {
    pub token: String,
}

#[derive(Debug, Deserialize)]
pub struct Instrument {
    pub credential: Credential,
}

#[derive(Debug, Default, Deserialize)]
pub struct PaymentDataIn {
    #[serde(default)]
    pub instrument: Option<Instrument>,
}

#[derive(Debug, Deserialize)]
pub struct CompleteIn {
    pub payment_data: PaymentDataIn,
}

/// `Total`.
#[derive(Debug, Clone, Serialize)]
pub struct Total {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub display_text: String,
    pub amount: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItemRef {
    pub id: String,
}

/// `LineItem`.
#[derive(Debug, Clone, Serialize)]
pub struct LineItem {
    pub id: String,
    pub item: ItemRef,
    pub quantity: u32,
    pub name: String,
    pub unit_amount: i64,
    pub product_id: String,
    pub variant_id: String,
    pub sku: String,
    pub totals: Vec<Total>,
}

/// `FulfillmentOptionShipping`.
#[derive(Debug, Clone, Serialize)]
pub struct FulfillmentOption {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub totals: Vec<Total>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Selected {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub option_id: String,
    pub item_ids: Vec<String>,
}

/// `MessageError` / `MessageWarning` / `MessageInfo`.
#[derive(Debug, Clone, Serialize)]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    pub content_type: &'static str,
    pub content: String,
}

impl Message {
    pub fn error(code: &'static str, param: Option<String>, content: impl Into<String>) -> Self {
        Message {
            kind: "error",
            code: Some(code),
            param,
            content_type: "plain",
            content: content.into(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Protocol {
    pub version: &'static str,
}

/// `CheckoutSession` (and, with `order`, `CheckoutSessionWithOrder`).
#[derive(Debug, Clone, Serialize)]
pub struct Session {
    pub id: String,
    pub protocol: Protocol,
    pub capabilities: serde_json::Value,
    pub status: &'static str,
    pub currency: String,
    pub line_items: Vec<LineItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fulfillment_details: Option<FulfillmentDetails>,
    pub fulfillment_options: Vec<FulfillmentOption>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub selected_fulfillment_options: Vec<Selected>,
    pub totals: Vec<Total>,
    pub messages: Vec<Message>,
    pub links: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<Order>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Order {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: String,
    pub checkout_session_id: String,
    pub permalink_url: String,
}
