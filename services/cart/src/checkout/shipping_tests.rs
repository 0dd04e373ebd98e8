//! A session's shipping and its price in its market (`quote`): offered
//! cheapest first, chosen with an update (a state-setting change that
//! reprices at once), and re-checked at confirm, where a changed market is
//! no order and the session repriced, never an order at a stale price.

use storefront_platform::error::ErrorKind;
use storefront_proto::cart::v1::confirm_checkout_reply::Outcome;
use storefront_proto::cart::v1::{Cart, CheckoutSession};

use super::fakes::{Mesh, mesh};

fn cart_id(cart: &Cart) -> String {
    cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default()
}

async fn open(m: &Mesh, cart: &Cart) -> CheckoutSession {
    let opened = m.checkout.open("c-1", &cart_id(cart), "net-1", None).await;
    opened.expect("opened")
}

/// (shipping, tax, total) in cents.
fn priced(s: &CheckoutSession) -> (i64, i64, i64) {
    let t = s.totals.clone().unwrap_or_default();
    let c = |m: Option<storefront_proto::common::v1::Money>| m.map_or(-1, |m| m.cent_amount);
    (c(t.shipping), c(t.tax), c(t.total))
}

fn offered(s: &CheckoutSession) -> Vec<(String, i64)> {
    let price = |o: &storefront_proto::common::v1::ShippingOption| {
        o.price.as_ref().map_or(-1, |m| m.cent_amount)
    };
    s.shipping_options
        .iter()
        .map(|o| (o.id.clone(), price(o)))
        .collect()
}

/// Australia alone, standard at `standard` cents, express only if asked.
fn australia(standard: i64, express: bool) -> String {
    let express = if express {
        r#",{"id":"express","name":{"en-AU":"Express"},"prices":[{"currency":"AUD","amount":1995}],"minDays":1,"maxDays":2}"#
    } else {
        ""
    };
    format!(
        r#"{{"markets":[{{"id":"au","currencies":[{{"code":"AUD","minorUnits":2}}],"countries":["AU"],
        "prices":"taxIncluded","tax":{{"name":"GST","onShipping":true,"rates":[{{"country":"AU","rate":0.1}}]}},
        "shipping":[{{"id":"standard","name":{{"en-AU":"Standard"}},"prices":[{{"currency":"AUD","amount":{standard}}}],"minDays":3,"maxDays":6}}{express}]}}]}}"#
    )
}

#[tokio::test]
async fn a_session_ships_by_the_cheapest_and_is_free_above_the_threshold() {
    let m = mesh(20);
    // 4 x 10.00: below the demo's 100.00, so standard's 9.95 is charged,
    // and its GST (1/11, rounded half to even) is in the tax.
    let session = open(&m, &m.cart(4).await).await;
    let expected = vec![("standard".into(), 995), ("express".into(), 1995)];
    assert_eq!(offered(&session), expected);
    assert_eq!(session.shipping_method_id, "standard");
    assert_eq!(priced(&session), (995, 364 + 90, 4000 + 995));
    assert_eq!(session.total_price, session.totals.clone().unwrap().total);
    let free = open(&m, &m.cart(10).await).await;
    assert_eq!(priced(&free), (0, 909, 10_000));
}

#[tokio::test]
async fn choosing_a_method_reprices_at_once_and_an_unknown_one_changes_nothing() {
    let m = mesh(20);
    let session = open(&m, &m.cart(4).await).await;
    let express = m.checkout.update("c-1", &session.id, "express").await;
    let express = express.expect("chosen");
    assert_eq!(express.shipping_method_id, "express");
    assert_eq!(priced(&express), (1995, 364 + 181, 5995));
    let again = m.checkout.update("c-1", &session.id, "express").await;
    assert_eq!(again.expect("the same"), express, "state-setting");
    let refused = m.checkout.update("c-1", &session.id, "drone").await;
    let refused = refused.expect_err("unknown");
    assert_eq!(refused.kind, ErrorKind::Validation);
    assert_eq!(refused.violations[0].field, "shippingMethodId");
    assert!(
        refused.message.contains("standard, express"),
        "{}",
        refused.message
    );
    let now = m.checkout.get("c-1", &session.id).await.expect("kept");
    assert_eq!(now, express, "nothing changed");
    let paid = m.pay(&session.id).await.session.expect("the session");
    let amount = paid.payment.and_then(|p| p.amount).map(|a| a.cent_amount);
    assert_eq!(
        amount,
        Some(5995),
        "the payment is of the total with express"
    );
    let confirmed = m.checkout.confirm("c-1", &session.id).await;
    assert!(matches!(confirmed, Ok(Outcome::Confirmed(_))));
    let orders = m.orders.orders.lock().expect("orders");
    let order = orders.values().next().expect("one order");
    let method = order.shipping_method.clone().expect("its method");
    assert_eq!(
        (method.id.as_str(), method.price.map(|p| p.cent_amount)),
        ("express", Some(1995))
    );
    assert_eq!(
        order.shipping_tax.as_ref().map(|t| t.cent_amount),
        Some(181)
    );
    let total = order.totals.as_ref().and_then(|t| t.total.clone());
    assert_eq!(total.map(|t| t.cent_amount), Some(5995));
}

#[tokio::test]
async fn a_market_changed_since_open_is_no_order_but_the_session_repriced() {
    let m = mesh(20);
    let session = open(&m, &m.cart(4).await).await;
    let chosen = m.checkout.update("c-1", &session.id, "express").await;
    chosen.expect("express");
    m.pay(&session.id).await;
    // Express is no longer offered, and standard costs 5.00.
    let markets = &m.checkout.markets;
    let set = markets
        .set(&m.checkout.store, australia(500, false).as_bytes())
        .await;
    set.expect("a new set");
    let repriced = match m.checkout.confirm("c-1", &session.id).await {
        Ok(Outcome::Repriced(r)) => r,
        other => panic!("repriced, not {other:?}"),
    };
    let shown = repriced.session.expect("the session repriced");
    assert_eq!(shown.shipping_method_id, "standard");
    assert_eq!(offered(&shown), vec![("standard".into(), 500)]);
    assert_eq!(priced(&shown), (500, 364 + 45, 4500));
    assert!(
        repriced.message.contains("45.00 AUD"),
        "{}",
        repriced.message
    );
    assert_eq!(m.orders.made(), 0, "no order at the old price");
    let voided = shown.payment.as_ref().map(|p| p.status);
    let voided_status = storefront_proto::payments::v1::PaymentStatus::Voided as i32;
    assert_eq!(
        voided,
        Some(voided_status),
        "the old total's payment let go"
    );
    let unpaid = m.checkout.confirm("c-1", &session.id).await;
    assert_eq!(unpaid.expect_err("unpaid").code, "PAYMENT_REQUIRED");
    let paid = m.pay(&session.id).await.session.expect("the session");
    let amount = paid.payment.and_then(|p| p.amount).map(|a| a.cent_amount);
    assert_eq!(amount, Some(4500), "a new payment of the new total");
    // The session keeps its new price: confirmed at it.
    match m.checkout.confirm("c-1", &session.id).await {
        Ok(Outcome::Confirmed(s)) => assert_eq!(priced(&s), (500, 409, 4500)),
        other => panic!("confirmed, not {other:?}"),
    }
    assert_eq!(m.orders.made(), 1);
}

#[tokio::test]
async fn an_address_the_market_does_not_ship_to_is_refused_before_anything_is_held() {
    let m = mesh(20);
    let cart = m.cart(4).await;
    let to_us = storefront_proto::common::v1::PostalAddress {
        country: "US".into(),
        ..Default::default()
    };
    let opened = m
        .checkout
        .open("c-1", &cart_id(&cart), "net-1", Some(to_us))
        .await;
    let refused = opened.expect_err("not sold there");
    assert_eq!(refused.kind, ErrorKind::Validation);
    assert_eq!(refused.violations[0].field, "shippingAddress.country");
    assert!(
        refused.message.contains("ships to AU"),
        "{}",
        refused.message
    );
    assert_eq!(
        *m.catalog.available.lock().expect("stock"),
        20,
        "nothing held"
    );
}

#[tokio::test]
async fn a_line_in_a_category_with_its_own_rate_is_taxed_at_it() {
    let m = mesh(20);
    // The fake product is in `kids-toys` (by its category id, whose key the
    // catalog gives): 5% there, 10% elsewhere, included.
    let reduced = r#"{"markets":[{"id":"au","currencies":[{"code":"AUD","minorUnits":2}],"countries":["AU"],
        "prices":"taxIncluded","tax":{"name":"GST","rates":[{"country":"AU","rate":0.1},
        {"country":"AU","category":"kids-toys","rate":0.05,"name":"GST (reduced)"}]}}]}"#;
    let set = m
        .checkout
        .markets
        .set(&m.checkout.store, reduced.as_bytes())
        .await;
    set.expect("a set with a category rate");
    let session = open(&m, &m.cart(4).await).await;
    let lines: Vec<(String, i64, i64)> = session
        .tax_lines
        .iter()
        .map(|l| {
            (
                l.name.clone(),
                l.rate_millionths,
                l.amount.as_ref().map_or(-1, |a| a.cent_amount),
            )
        })
        .collect();
    // 40.00 at 5% included: 4000 x 0.05 / 1.05 = 190.48, rounded 190.
    assert_eq!(lines, vec![("GST (reduced)".to_string(), 50_000, 190)]);
    assert_eq!(
        priced(&session),
        (0, 190, 4000),
        "no shipping in this market"
    );
}
