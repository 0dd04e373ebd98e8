//! Property test: whatever a shopper does to a cart, its money adds up.

use proptest::prelude::*;
use storefront_proto::cart::v1::Cart;
use storefront_proto::common::v1::LineItem;

use crate::pricing::{money, reprice};
use crate::promotions::{Catalogue, demo};

const SHOES: &str = "shoes-category";
const CODES: &[&str] = &[
    "WELCOME10",
    "SHOES20",
    "TAKE15",
    "EXTRA5",
    "SPRING25",
    "FUTURE30",
    "NOPE",
];

#[derive(Debug, Clone)]
enum Op {
    Add {
        cents: i64,
        quantity: u32,
        shoe: bool,
    },
    SetQuantity {
        line: usize,
        quantity: u32,
    },
    Remove {
        line: usize,
    },
    Code {
        index: usize,
    },
    ClearCodes,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1i64..50_000, 1u32..=99, any::<bool>()).prop_map(|(cents, quantity, shoe)| Op::Add {
            cents,
            quantity,
            shoe
        }),
        (0usize..8, 1u32..=99).prop_map(|(line, quantity)| Op::SetQuantity { line, quantity }),
        (0usize..8).prop_map(|line| Op::Remove { line }),
        (0usize..CODES.len()).prop_map(|index| Op::Code { index }),
        Just(Op::ClearCodes),
    ]
}

fn apply(cart: &mut Cart, catalogue: &Catalogue, op: Op, now: i64) {
    match op {
        Op::Add {
            cents,
            quantity,
            shoe,
        } => cart.line_items.push(LineItem {
            id: format!("l{}", cart.line_items.len()),
            product_id: format!("p{cents}"),
            quantity,
            unit_price: Some(money(&cart.currency_code, cents)),
            category_ids: if shoe { vec![SHOES.into()] } else { vec![] },
            ..Default::default()
        }),
        Op::SetQuantity { line, quantity } => {
            if let Some(l) = cart.line_items.get_mut(line) {
                l.quantity = quantity;
            }
        }
        Op::Remove { line } => {
            if line < cart.line_items.len() {
                cart.line_items.remove(line);
            }
        }
        // A rejected code changes nothing, as in the service.
        Op::Code { index } => {
            if let Ok(code) = catalogue.check(CODES[index], cart, now) {
                cart.discount_codes = catalogue.with_code(&cart.discount_codes, code);
            }
        }
        Op::ClearCodes => cart.discount_codes.clear(),
    }
}

fn cents(m: &Option<storefront_proto::common::v1::Money>) -> i64 {
    m.as_ref().map_or(0, |m| m.cent_amount)
}

proptest! {
    #[test]
    fn money_always_adds_up(ops in proptest::collection::vec(op(), 1..40), nzd in any::<bool>()) {
        let catalogue = Catalogue::new(demo(vec![SHOES.into()]));
        let now = 1_795_000_000;
        let currency = if nzd { "NZD" } else { "AUD" };
        let mut cart = Cart { currency_code: currency.into(), ..Default::default() };
        for op in ops {
            apply(&mut cart, &catalogue, op, now);
            reprice(&mut cart, &catalogue, now).unwrap();
            let gross: i64 = cart.line_items.iter().map(|l| cents(&l.unit_price) * i64::from(l.quantity)).sum();
            let net: i64 = cart.line_items.iter().map(|l| cents(&l.total_price)).sum();
            prop_assert_eq!(cents(&cart.subtotal), gross);
            prop_assert_eq!(cents(&cart.total_price), net);
            prop_assert_eq!(cents(&cart.total_price), cents(&cart.subtotal) - cents(&cart.discount_total));
            prop_assert!(cents(&cart.total_price) >= 0);
            prop_assert!(cents(&cart.discount_total) >= 0);
            for l in &cart.line_items {
                prop_assert!(cents(&l.total_price) >= 0);
                prop_assert!(cents(&l.total_price) <= cents(&l.unit_price) * i64::from(l.quantity));
                prop_assert_eq!(l.total_price.as_ref().map(|m| m.currency_code.as_str()), Some(currency));
            }
        }
    }
}

#[test]
fn stacking_rules() {
    let catalogue = Catalogue::new(demo(vec![]));
    let codes = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        catalogue.with_code(&codes(&["TAKE15"]), "EXTRA5".into()),
        codes(&["TAKE15", "EXTRA5"])
    );
    assert_eq!(
        catalogue.with_code(&codes(&["TAKE15", "EXTRA5"]), "WELCOME10".into()),
        codes(&["WELCOME10"])
    );
    assert_eq!(
        catalogue.with_code(&codes(&["WELCOME10"]), "TAKE15".into()),
        codes(&["TAKE15"])
    );
    assert_eq!(
        catalogue.with_code(&codes(&["TAKE15"]), "TAKE15".into()),
        codes(&["TAKE15"])
    );
}
