//! A line of a cart or an order, and the address it ships to.

use serde::Serialize;
use storefront_proto::common::v1 as cpb;
use utoipa::ToSchema;

use crate::Invalid;
use crate::common::{LocalizedString, Money, localized};

fn money(m: Option<cpb::Money>, what: &str) -> Result<Money, Invalid> {
    m.map(Money::from)
        .ok_or_else(|| Invalid::new(format!("{what} missing")))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LineItem {
    pub id: String,
    pub product_id: String,
    pub variant_id: u32,
    pub sku: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    pub quantity: u32,
    /// The catalog's price when the line was added.
    pub unit_price: Money,
    /// unitPrice x quantity less this line's share of the discounts; the
    /// lines' totals add up to the cart's totalPrice exactly.
    pub total_price: Money,
}

impl TryFrom<cpb::LineItem> for LineItem {
    type Error = Invalid;
    fn try_from(l: cpb::LineItem) -> Result<Self, Invalid> {
        Ok(Self {
            id: l.id,
            product_id: l.product_id,
            variant_id: l.variant_id,
            sku: l.sku,
            name: localized(l.name),
            quantity: l.quantity,
            unit_price: money(l.unit_price, "unit price")?,
            total_price: money(l.total_price, "line total")?,
        })
    }
}

pub fn lines(items: Vec<cpb::LineItem>) -> Result<Vec<LineItem>, Invalid> {
    items.into_iter().map(LineItem::try_from).collect()
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShippingAddress {
    pub first_name: String,
    pub last_name: String,
    pub street_name: String,
    pub street_number: String,
    pub city: String,
    pub postal_code: String,
    pub state: String,
    pub country: String,
    /// ISO 3166-2, when the address has one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub region: String,
}

impl From<cpb::PostalAddress> for ShippingAddress {
    fn from(a: cpb::PostalAddress) -> Self {
        Self {
            first_name: a.first_name,
            last_name: a.last_name,
            street_name: a.street_name,
            street_number: a.street_number,
            city: a.city,
            postal_code: a.postal_code,
            state: a.state,
            country: a.country,
            region: a.region,
        }
    }
}
