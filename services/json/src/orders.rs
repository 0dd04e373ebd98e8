//! Orders in two live representations: v1 with `totalAmount`, v2 with a
//! `totals` breakdown in its place (a breaking change, hence a new major).

use serde::{Deserialize, Serialize};
use storefront_proto::common::v1 as cpb;
use storefront_proto::orders::v1 as pb;
use utoipa::ToSchema;

use crate::Invalid;
use crate::common::{Meta, Money};
use crate::lines::{LineItem, ShippingAddress};
use crate::payments::OrderPayment;
pub use crate::totals::{ShippingOption, TaxLine, Totals};

pub use storefront_proto::names::{
    order_status as status_name, parse_order_status as parse_status,
};

/// What both versions share.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderCommon {
    #[serde(flatten)]
    pub meta: Meta,
    pub order_number: String,
    pub customer_id: String,
    /// CONFIRMED, PROCESSING, SHIPPED, DELIVERED or CANCELLED.
    #[schema(example = "CONFIRMED")]
    pub status: &'static str,
    pub line_items: Vec<LineItem>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shipping_address: Option<ShippingAddress>,
    pub discount_codes: Vec<String>,
    /// What paid for it (absent on orders made before payments).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment: Option<OrderPayment>,
}

/// Order, version 1 (deprecated).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderV1 {
    #[serde(flatten)]
    pub common: OrderCommon,
    /// The amount charged.
    pub total_amount: Money,
}

/// Order, version 2: `totals` replaces `totalAmount`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderV2 {
    #[serde(flatten)]
    pub common: OrderCommon,
    pub totals: Totals,
    /// The tax in `totals.tax` by name and rate (none on orders made
    /// before markets).
    pub tax_lines: Vec<TaxLine>,
    /// The shipping method chosen at checkout, its price (`totals.shipping`)
    /// and its tax (absent on orders made before shipping methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shipping_method: Option<OrderShipping>,
}

/// An order's shipping: the method as offered at checkout, and its tax.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderShipping {
    #[serde(flatten)]
    pub method: ShippingOption,
    /// The part of `price` that is tax (tax included), or the tax added
    /// to it (tax excluded).
    pub tax: Money,
}

/// What the v2 representation adds to the common part.
struct Priced {
    totals: cpb::Totals,
    tax_lines: Vec<cpb::TaxLine>,
    shipping_method: Option<cpb::ShippingOption>,
    shipping_tax: Option<cpb::Money>,
}

fn money(m: Option<storefront_proto::common::v1::Money>) -> Result<Money, Invalid> {
    m.map(Money::from)
        .ok_or_else(|| Invalid::new("order total missing"))
}

fn split(o: pb::Order) -> Result<(OrderCommon, Priced), Invalid> {
    let totals = o
        .totals
        .ok_or_else(|| Invalid::new("order without totals"))?;
    let common = OrderCommon {
        meta: Meta::from_proto(o.meta)?,
        order_number: o.order_number,
        customer_id: o.customer_id,
        status: status_name(o.status),
        line_items: o
            .line_items
            .into_iter()
            .map(LineItem::try_from)
            .collect::<Result<_, _>>()?,
        shipping_address: o.shipping_address.map(ShippingAddress::from),
        discount_codes: o.discount_codes,
        payment: o.payment.map(OrderPayment::try_from).transpose()?,
    };
    let priced = Priced {
        totals,
        tax_lines: o.tax_lines,
        shipping_method: o.shipping_method,
        shipping_tax: o.shipping_tax,
    };
    Ok((common, priced))
}

impl TryFrom<pb::Order> for OrderV1 {
    type Error = Invalid;
    fn try_from(o: pb::Order) -> Result<Self, Invalid> {
        let (common, priced) = split(o)?;
        Ok(Self {
            common,
            total_amount: money(priced.totals.total)?,
        })
    }
}

impl TryFrom<pb::Order> for OrderV2 {
    type Error = Invalid;
    fn try_from(o: pb::Order) -> Result<Self, Invalid> {
        let (common, priced) = split(o)?;
        let shipping_method = match priced.shipping_method {
            Some(method) => Some(OrderShipping {
                method: ShippingOption::try_from(method)?,
                tax: money(priced.shipping_tax)?,
            }),
            None => None,
        };
        Ok(Self {
            common,
            totals: Totals::try_from(priced.totals)?,
            tax_lines: priced
                .tax_lines
                .into_iter()
                .map(TaxLine::try_from)
                .collect::<Result<_, _>>()?,
            shipping_method,
        })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct StatusBody {
    /// The target state: CANCELLED from a customer; PROCESSING, SHIPPED or
    /// DELIVERED from fulfilment.
    #[schema(
        required = true,
        value_type = String,
        pattern = "^(CANCELLED|PROCESSING|SHIPPED|DELIVERED)$"
    )]
    pub status: Option<String>,
}

/// A page of orders by when they last changed (reconciliation).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrderUpdates {
    /// Oldest change first, each as it is now.
    pub results: Vec<OrderV2>,
    /// Where this page stopped: pass it as `cursor` for the next page, or
    /// later to poll for newer changes.
    pub next_cursor: String,
    /// Whether more changes are known now.
    pub more: bool,
}

impl TryFrom<pb::ListOrderUpdatesResponse> for OrderUpdates {
    type Error = Invalid;

    fn try_from(page: pb::ListOrderUpdatesResponse) -> Result<Self, Invalid> {
        Ok(Self {
            results: page
                .orders
                .into_iter()
                .map(OrderV2::try_from)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
            more: page.more,
        })
    }
}
