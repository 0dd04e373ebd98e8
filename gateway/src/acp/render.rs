//! A cart and its current checkout session as the protocol's checkout
//! session: line items, totals, fulfillment options, status.

use std::borrow::Cow;

use serde_json::json;
use storefront_proto::cart::v1::{Cart, CartState, CheckoutSession, CheckoutStatus};
use storefront_proto::common::v1::{LocalizedString, Money, PostalAddress, Totals};

use super::guard::VERSIONS;
use super::wire::{
    Address, FulfillmentDetails, FulfillmentOption, ItemRef, LineItem, Message, Order, Protocol,
    Selected, Session, Total,
};

/// Where the facade's state stands besides the cart's and session's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    No,
    Canceled,
}

/// One string of a localized text: English first, else the first locale.
pub fn text(s: Option<&LocalizedString>) -> String {
    let Some(s) = s else { return String::new() };
    let mut keys: Vec<&String> = s.values.keys().collect();
    keys.sort();
    let key = keys
        .iter()
        .find(|k| k.starts_with("en"))
        .or(keys.first())
        .copied();
    key.and_then(|k| s.values.get(k))
        .cloned()
        .unwrap_or_default()
}

fn cents(m: Option<&Money>) -> i64 {
    m.map_or(0, |m| m.cent_amount)
}

fn total(kind: &'static str, text: impl Into<String>, amount: i64) -> Total {
    Total {
        kind,
        display_text: text.into(),
        amount,
    }
}

/// The facade's item id: `{productId}:{variantId}`.
pub fn item_id(product_id: &str, variant_id: u32) -> String {
    format!("{product_id}:{variant_id}")
}

fn line_items(cart: &Cart) -> Vec<LineItem> {
    cart.line_items
        .iter()
        .map(|l| {
            let unit = cents(l.unit_price.as_ref());
            let base = unit * i64::from(l.quantity);
            let subtotal = cents(l.total_price.as_ref());
            LineItem {
                id: l.id.clone(),
                item: ItemRef {
                    id: item_id(&l.product_id, l.variant_id),
                },
                quantity: l.quantity,
                name: text(l.name.as_ref()),
                unit_amount: unit,
                product_id: l.product_id.clone(),
                variant_id: l.variant_id.to_string(),
                sku: l.sku.clone(),
                totals: vec![
                    total("items_base_amount", "Base amount", base),
                    total("discount", "Discount", (base - subtotal).max(0)),
                    total("subtotal", "Subtotal", subtotal),
                    total("total", "Total", subtotal),
                ],
            }
        })
        .collect()
}

/// The order's totals: tax a market's prices include is shown and
/// described so, and not added again.
fn totals(t: Option<&Totals>, shipped: bool) -> Vec<Total> {
    let Some(t) = t else { return Vec::new() };
    let (sub, discount, shipping, tax, all) = (
        cents(t.subtotal.as_ref()),
        cents(t.discount.as_ref()),
        cents(t.shipping.as_ref()),
        cents(t.tax.as_ref()),
        cents(t.total.as_ref()),
    );
    let included = tax != 0 && all == sub - discount + shipping;
    let mut out = vec![total("items_base_amount", "Items", sub)];
    if discount != 0 {
        out.push(total("discount", "Discount", discount));
    }
    out.push(total("subtotal", "Subtotal", sub - discount));
    if shipped {
        out.push(total("fulfillment", "Shipping", shipping));
    }
    let tax_text = if included { "Tax (included)" } else { "Tax" };
    out.push(total("tax", tax_text, tax));
    out.push(total("total", "Total", all));
    out
}

pub fn address_in(a: &PostalAddress) -> FulfillmentDetails {
    let name = format!("{} {}", a.first_name, a.last_name)
        .trim()
        .to_string();
    FulfillmentDetails {
        name: Some(name.clone()),
        address: Some(Address {
            name,
            line_one: a.street_name.clone(),
            line_two: Some(a.street_number.clone()).filter(|s| !s.is_empty()),
            city: a.city.clone(),
            state: a.state.clone(),
            country: a.country.clone(),
            postal_code: a.postal_code.clone(),
        }),
        ..FulfillmentDetails::default()
    }
}

fn options(session: &CheckoutSession) -> Vec<FulfillmentOption> {
    session
        .shipping_options
        .iter()
        .map(|o| {
            let title = text(o.name.as_ref());
            let days = match (o.min_days, o.max_days) {
                (0, 0) => None,
                (min, max) if min == max => Some(format!("Arrives in {max} days")),
                (min, max) => Some(format!("Arrives in {min}-{max} days")),
            };
            FulfillmentOption {
                kind: "shipping",
                id: o.id.clone(),
                title: title.clone(),
                description: days,
                totals: vec![total("total", title, cents(o.price.as_ref()))],
            }
        })
        .collect()
}

/// The payment handlers the facade takes: a delegated card token.
pub fn capabilities() -> serde_json::Value {
    json!({
        "payment": {"handlers": [{
            "id": "card_tokenized",
            "name": "dev.acp.tokenized.card",
            "display_name": "Card",
            "version": VERSIONS[0],
            "spec": "https://acp.dev/handlers/tokenized.card",
            "requires_delegate_payment": true,
            "requires_pci_compliance": false,
            "psp": "stripe",
            "config_schema": "https://acp.dev/schemas/handlers/tokenized.card/config.json",
            "instrument_schemas": ["https://acp.dev/schemas/handlers/tokenized.card/instrument.json"],
            "config": {}
        }]}
    })
}

/// The protocol's status of the pair.
fn status(cart: &Cart, session: Option<&CheckoutSession>, ended: Ended) -> &'static str {
    let confirmed = session.is_some_and(|s| s.status == CheckoutStatus::Confirmed as i32);
    if confirmed || cart.state == CartState::Ordered as i32 {
        return "completed";
    }
    if ended == Ended::Canceled {
        return "canceled";
    }
    match session.map(|s| CheckoutStatus::try_from(s.status)) {
        Some(Ok(CheckoutStatus::Open)) if !cart.line_items.is_empty() => "ready_for_payment",
        _ if cart.line_items.is_empty() => "incomplete",
        _ => "not_ready_for_payment",
    }
}

/// The session `id` shows: its cart, its current checkout (if opened),
/// and the messages of the request that came to it.
pub fn session(
    id: &str,
    cart: &Cart,
    checkout: Option<&CheckoutSession>,
    ended: Ended,
    mut messages: Vec<Message>,
) -> Session {
    let status = status(cart, checkout, ended);
    let expired = checkout.is_some_and(|s| s.status == CheckoutStatus::Expired as i32);
    if expired && status == "not_ready_for_payment" && messages.is_empty() {
        messages.push(Message::error(
            "expired",
            None,
            "the hold on these items ran out: update the session to hold them again",
        ));
    }
    if status == "not_ready_for_payment" && checkout.is_none() && messages.is_empty() {
        let param = Some("$.fulfillment_details.address".to_string());
        messages.push(Message::error(
            "missing",
            param,
            "a fulfillment address is needed",
        ));
    }
    let lines = line_items(cart);
    let selected = checkout
        .filter(|s| !s.shipping_method_id.is_empty())
        .map(|s| Selected {
            kind: "shipping",
            option_id: s.shipping_method_id.clone(),
            item_ids: lines.iter().map(|l| l.id.clone()).collect(),
        });
    let shown_totals = match checkout {
        Some(s) => totals(s.totals.as_ref(), true),
        None => totals(cart.totals.as_ref(), false),
    };
    Session {
        id: id.to_string(),
        protocol: Protocol {
            version: VERSIONS[0],
        },
        capabilities: capabilities(),
        status,
        currency: cart.currency_code.to_ascii_lowercase(),
        line_items: lines,
        fulfillment_details: checkout
            .and_then(|s| s.shipping_address.as_ref())
            .map(address_in),
        fulfillment_options: checkout.map(options).unwrap_or_default(),
        selected_fulfillment_options: selected.into_iter().collect(),
        totals: shown_totals,
        messages,
        links: Vec::new(),
        created_at: checkout
            .and_then(|s| s.created_at.as_ref())
            .map(|t| t.to_string()),
        expires_at: checkout
            .filter(|s| s.status == CheckoutStatus::Open as i32)
            .and_then(|s| s.expires_at.as_ref())
            .map(|t| t.to_string()),
        order: None,
    }
}

/// The order a completed session made, for `complete`'s answer.
pub fn order(id: &str, order_id: &str, permalink: &str) -> Order {
    Order {
        kind: "order",
        id: order_id.to_string(),
        checkout_session_id: id.to_string(),
        permalink_url: permalink.replace("{orderId}", order_id),
    }
}

/// `Address.name` as a first and a last name (one word: both).
pub fn names(full: &str) -> (Cow<'_, str>, Cow<'_, str>) {
    let full = full.trim();
    match full.rsplit_once(char::is_whitespace) {
        Some((first, last)) => (Cow::Borrowed(first.trim()), Cow::Borrowed(last)),
        None => (Cow::Borrowed(full), Cow::Borrowed(full)),
    }
}
