//! Carts, line items, checkout sessions, promotions and orders (v1, v2).

use serde::{Deserialize, Deserializer, Serialize};
use storefront_proto::cart::v1 as pb;
use storefront_proto::common::v1 as cpb;
use utoipa::ToSchema;

use super::bounded::{DiscountCode, Id};
use super::common::{LocalizedString, Meta, Money, localized, timestamp};
use super::payments::Payment;
use super::totals::{ShippingOption, TaxLine, Totals};
use crate::error::ApiError;
use storefront_json::lines::lines;
pub use storefront_json::lines::{LineItem, ShippingAddress};

fn money(m: Option<cpb::Money>, what: &str) -> Result<Money, ApiError> {
    m.map(Money::from)
        .ok_or_else(|| ApiError::bad_gateway(format!("{what} missing")))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cart {
    #[serde(flatten)]
    pub meta: Meta,
    pub customer_id: String,
    pub currency_code: String,
    pub line_items: Vec<LineItem>,
    pub discount_codes: Vec<String>,
    /// Sum of unitPrice x quantity.
    pub subtotal: Money,
    pub discount_total: Money,
    /// subtotal - discountTotal, never negative.
    pub total_price: Money,
    /// ACTIVE or ORDERED.
    #[schema(example = "ACTIVE")]
    pub state: &'static str,
    /// An estimate before checkout (docs/markets.md): the tax at the
    /// cart's market's first country, no region, and no shipping yet; the
    /// checkout session's `totals` are what the order comes to. Absent on
    /// carts unchanged since before markets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
    /// The tax in `totals.tax` by name and rate.
    pub tax_lines: Vec<TaxLine>,
}

impl TryFrom<pb::Cart> for Cart {
    type Error = ApiError;
    fn try_from(c: pb::Cart) -> Result<Self, ApiError> {
        Ok(Self {
            meta: Meta::from_proto(c.meta)?,
            customer_id: c.customer_id,
            currency_code: c.currency_code,
            line_items: lines(c.line_items)?,
            discount_codes: c.discount_codes,
            subtotal: money(c.subtotal, "subtotal")?,
            discount_total: money(c.discount_total, "discount total")?,
            total_price: money(c.total_price, "total")?,
            state: if c.state == pb::CartState::Ordered as i32 {
                "ORDERED"
            } else {
                "ACTIVE"
            },
            totals: c.totals.map(Totals::try_from).transpose()?,
            tax_lines: c
                .tax_lines
                .into_iter()
                .map(TaxLine::try_from)
                .collect::<Result<_, _>>()?,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateCartBody {
    /// A currency some market sells now (`GET /markets`); absent or empty:
    /// the shop's default (its markets' first currency, AUD in the demo).
    #[schema(value_type = Option<String>, pattern = "^([A-Z]{3})?$")]
    pub currency_code: Option<String>,
}

/// Distinguishes an absent field from an explicit null.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateCartBody {
    /// The version read; when sent and stale, 409.
    pub version: Option<i64>,
    /// A code to apply; `null` removes every code; absent leaves them.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<DiscountCode>)]
    pub discount_code: Option<Option<DiscountCode>>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddLineItemBody {
    #[schema(required = true, value_type = Id)]
    pub product_id: Option<Id>,
    /// The variant's id within its product (`GET /products/{id}/variants`).
    #[schema(required = true, value_type = u32)]
    pub variant_id: Option<u32>,
    /// 1 to 99; an equal line (same product and variant) is merged.
    #[schema(required = true, value_type = u32, minimum = 1, maximum = 99)]
    pub quantity: Option<u32>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuantityBody {
    /// 1 to 99.
    #[schema(required = true, value_type = u32, minimum = 1, maximum = 99)]
    pub quantity: Option<u32>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutBody {
    #[schema(required = true, value_type = Id)]
    pub cart_id: Option<Id>,
    /// An address from the caller's address book (customers); or send
    /// `shippingAddress`.
    #[schema(value_type = Id)]
    pub shipping_address_id: Option<Id>,
    /// The address itself, checked by the address book's rules: a guest's
    /// way (a guest has no address book), or a customer's one-off address.
    /// Exactly one of `shippingAddressId` and `shippingAddress`.
    pub shipping_address: Option<crate::model::customers::AddressFields>,
}

/// A state-setting change of an open checkout session.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutUpdate {
    /// One of the session's `shippingOptions`.
    #[schema(required = true, value_type = Id)]
    pub shipping_method_id: Option<Id>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckoutSession {
    pub id: String,
    pub cart_id: String,
    /// OPEN, CONFIRMED or EXPIRED.
    #[schema(example = "OPEN")]
    pub status: &'static str,
    pub total_price: Money,
    /// Set once confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<String>,
    pub expires_at: String,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shipping_address: Option<ShippingAddress>,
    /// What the order would come to now (absent on sessions opened before
    /// markets): `total` is `totalPrice`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub totals: Option<Totals>,
    /// The tax in `totals.tax` by name and rate.
    pub tax_lines: Vec<TaxLine>,
    /// The market's shipping methods to the address, cheapest first, each
    /// priced for this cart (0 when free above its threshold).
    pub shipping_options: Vec<ShippingOption>,
    /// The method chosen: the cheapest unless chosen with
    /// `PUT /checkout/{sessionId}` (absent where none ships).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shipping_method_id: Option<String>,
    /// Its payment, once started with `POST /checkout/{sessionId}/payment`:
    /// a confirm needs it `authorized` for exactly `totals.total`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<Payment>,
    /// true: the checkout went past what its shopper or client network may
    /// hold unpaid (`HOLD_LIMIT_*`), so it holds nothing until its payment
    /// is authorized; then it holds its lines (up to `HOLD_LIMIT_PAID_MULTIPLE`
    /// times the limit) and this turns false. docs/abuse-limits.md.
    pub awaiting_payment: bool,
}

impl TryFrom<pb::CheckoutSession> for CheckoutSession {
    type Error = ApiError;
    fn try_from(s: pb::CheckoutSession) -> Result<Self, ApiError> {
        let status = match pb::CheckoutStatus::try_from(s.status) {
            Ok(pb::CheckoutStatus::Confirmed) => "CONFIRMED",
            Ok(pb::CheckoutStatus::Expired) => "EXPIRED",
            _ => "OPEN",
        };
        Ok(Self {
            id: s.id,
            cart_id: s.cart_id,
            status,
            total_price: money(s.total_price, "session total")?,
            order_id: Some(s.order_id).filter(|o| !o.is_empty()),
            expires_at: timestamp(s.expires_at),
            created_at: timestamp(s.created_at),
            shipping_address: s.shipping_address.map(ShippingAddress::from),
            totals: s.totals.map(Totals::try_from).transpose()?,
            tax_lines: s
                .tax_lines
                .into_iter()
                .map(TaxLine::try_from)
                .collect::<Result<_, _>>()?,
            shipping_options: s
                .shipping_options
                .into_iter()
                .map(ShippingOption::try_from)
                .collect::<Result<_, _>>()?,
            shipping_method_id: Some(s.shipping_method_id).filter(|m| !m.is_empty()),
            payment: s.payment.map(Payment::try_from).transpose()?,
            awaiting_payment: s.awaiting_payment,
        })
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Promotion {
    pub id: String,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    pub codes: Vec<String>,
    /// percentage or fixedAmount.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Percentage promotions: the percentage in basis points (1000 = 10%).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis_points: Option<u32>,
    /// Fixed-amount promotions: the amount per currency.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub amounts: Vec<Money>,
    /// The subtotal a cart must reach, per currency.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub minimum_subtotals: Vec<Money>,
    /// Empty with productIds empty: every product.
    pub category_ids: Vec<String>,
    pub product_ids: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    /// Whether it combines with other stackable codes.
    pub stackable: bool,
}

impl From<pb::Promotion> for Promotion {
    fn from(p: pb::Promotion) -> Self {
        let percentage = p.kind == pb::PromotionKind::Percentage as i32;
        Self {
            id: p.id,
            key: p.key,
            name: localized(p.name),
            codes: p.codes,
            kind: if percentage {
                "percentage"
            } else {
                "fixedAmount"
            },
            basis_points: percentage.then_some(p.basis_points),
            amounts: p.amounts.into_iter().map(Money::from).collect(),
            minimum_subtotals: p.minimum_subtotals.into_iter().map(Money::from).collect(),
            category_ids: p.category_ids,
            product_ids: p.product_ids,
            starts_at: p.starts_at.map(|t| timestamp(Some(t))),
            ends_at: p.ends_at.map(|t| timestamp(Some(t))),
            stackable: p.stackable,
        }
    }
}
