//! What an order (or a checkout session) comes to, its tax by name and
//! rate, and its shipping (docs/markets.md).

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
pub struct Totals {
    pub subtotal: Money,
    pub discount: Money,
    /// The chosen shipping method's price (0 when free; tax included in
    /// tax-included markets).
    pub shipping: Money,
    /// The tax its market says: included in `total` (tax-included
    /// markets) or added to it (tax-excluded ones).
    pub tax: Money,
    pub total: Money,
}

impl TryFrom<cpb::Totals> for Totals {
    type Error = Invalid;
    fn try_from(t: cpb::Totals) -> Result<Self, Invalid> {
        Ok(Self {
            subtotal: money(t.subtotal, "subtotal")?,
            discount: money(t.discount, "discount")?,
            shipping: money(t.shipping, "shipping")?,
            tax: money(t.tax, "tax")?,
            total: money(t.total, "total")?,
        })
    }
}

/// One line of the tax: `GST` at 0.1, and what it comes to.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaxLine {
    #[schema(example = "GST")]
    pub name: String,
    /// Between 0 and 1: 0.0725 is 7.25%.
    #[schema(example = 0.1)]
    pub rate: f64,
    pub amount: Money,
}

impl TryFrom<cpb::TaxLine> for TaxLine {
    type Error = Invalid;
    fn try_from(l: cpb::TaxLine) -> Result<Self, Invalid> {
        Ok(Self {
            name: l.name,
            rate: l.rate_millionths as f64 / 1_000_000.0,
            amount: money(l.amount, "tax line")?,
        })
    }
}

/// A shipping method as a checkout offers it (or an order records it):
/// its price in the cart's currency, 0 when free above its threshold.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShippingOption {
    #[schema(example = "standard")]
    pub id: String,
    /// By locale.
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    pub price: Money,
    /// The delivery estimate, in days.
    pub min_days: u32,
    pub max_days: u32,
}

impl TryFrom<cpb::ShippingOption> for ShippingOption {
    type Error = Invalid;
    fn try_from(o: cpb::ShippingOption) -> Result<Self, Invalid> {
        Ok(Self {
            id: o.id,
            name: localized(o.name),
            price: money(o.price, "shipping price")?,
            min_days: o.min_days,
            max_days: o.max_days,
        })
    }
}
