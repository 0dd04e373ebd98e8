//! Cart arithmetic in integer minor units: line amounts, promotions applied
//! in code order, each discount spread over its eligible lines by largest
//! remainder, so that line totals always add up to the cart total.

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::cart::v1::Cart;
use storefront_proto::error::codes;

pub use crate::discounts::{discount_of, distribute, money};
use crate::promotions::Catalogue;

/// Recomputes every amount of `cart` from its lines and codes. A code
/// that no longer applies (unknown, ended, not in the cart's currency,
/// minimum not met, nothing eligible) leaves the cart: the codes a cart
/// shows are the ones it is discounted by. Returns the codes dropped.
pub fn reprice(
    cart: &mut Cart,
    catalogue: &Catalogue,
    now: i64,
) -> Result<Vec<String>, ServiceError> {
    let currency = cart.currency_code.clone();
    // Prices are bounded where they come in (`MAX_CENT_AMOUNT`), so no
    // cart of bounded lines overflows; should one, it is refused, never
    // wrapped into a negative total.
    let gross: Option<Vec<i64>> = cart
        .line_items
        .iter()
        .map(|l| {
            l.unit_price
                .as_ref()
                .map_or(0, |p| p.cent_amount)
                .checked_mul(i64::from(l.quantity))
        })
        .collect();
    let gross = gross.ok_or_else(too_large)?;
    let subtotal = gross
        .iter()
        .try_fold(0i64, |sum, g| sum.checked_add(*g))
        .ok_or_else(too_large)?;
    let mut remaining = gross;
    let mut dropped = Vec::new();
    for code in &cart.discount_codes {
        let shares = catalogue
            .by_code(code)
            .filter(|p| catalogue.active(p, now))
            .and_then(|promotion| discount_of(promotion, cart, subtotal, &remaining));
        match shares {
            Some(shares) => {
                for (r, s) in remaining.iter_mut().zip(shares) {
                    *r -= s;
                }
            }
            None => dropped.push(code.clone()),
        }
    }
    cart.discount_codes.retain(|c| !dropped.contains(c));
    let total: i64 = remaining.iter().sum();
    for (line, r) in cart.line_items.iter_mut().zip(&remaining) {
        line.total_price = Some(money(&currency, *r));
    }
    cart.subtotal = Some(money(&currency, subtotal));
    cart.discount_total = Some(money(&currency, subtotal - total));
    cart.total_price = Some(money(&currency, total));
    Ok(dropped)
}

/// 422: a cart whose amounts would pass what 64-bit minor units hold.
fn too_large() -> ServiceError {
    let message = "the cart's amounts are larger than the shop can total";
    ServiceError::new(ErrorKind::Validation, codes::VALIDATION_ERROR, message).with_violation(
        FieldViolation::new("lineItems", codes::OUT_OF_RANGE, message),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use storefront_proto::cart::v1::{Promotion, PromotionKind};

    use super::*;

    #[test]
    fn distribution_is_exact_and_proportional() {
        assert_eq!(distribute(100, &[100, 100, 100]), vec![34, 33, 33]);
        assert_eq!(distribute(10, &[500, 300, 200]), vec![5, 3, 2]);
        assert_eq!(distribute(7, &[0, 10]), vec![0, 7]);
        assert_eq!(
            distribute(50, &[10, 10]),
            vec![10, 10],
            "never more than a line holds"
        );
    }

    #[test]
    fn codes_that_cannot_apply_in_the_cart_s_currency_are_dropped_not_zeroed() {
        use storefront_proto::common::v1::LineItem;
        let promo = |key: &str, kind: PromotionKind| Promotion {
            id: key.into(),
            codes: vec![key.to_uppercase()],
            kind: kind as i32,
            stackable: true,
            ..Default::default()
        };
        let catalogue = Catalogue::new(vec![
            // A fixed amount only in NZD: nothing off an AUD cart.
            Promotion {
                amounts: vec![money("NZD", 500)],
                ..promo("nzfive", PromotionKind::FixedAmount)
            },
            // A minimum only in NZD: no minimum-less discount in AUD.
            Promotion {
                basis_points: 1000,
                minimum_subtotals: vec![money("NZD", 100)],
                ..promo("nzten", PromotionKind::Percentage)
            },
            Promotion {
                basis_points: 1000,
                ..promo("ten", PromotionKind::Percentage)
            },
        ]);
        let mut cart = Cart {
            currency_code: "AUD".into(),
            discount_codes: vec!["NZFIVE".into(), "NZTEN".into(), "TEN".into()],
            line_items: vec![LineItem {
                quantity: 2,
                unit_price: Some(money("AUD", 5_000)),
                ..Default::default()
            }],
            ..Default::default()
        };
        let dropped = reprice(&mut cart, &catalogue, 0).unwrap();
        assert_eq!(dropped, ["NZFIVE", "NZTEN"]);
        assert_eq!(cart.discount_codes, ["TEN"]);
        assert_eq!(cart.total_price, Some(money("AUD", 9_000)));
        for code in ["NZFIVE", "NZTEN"] {
            let refused = catalogue.check(code, &cart, 0).unwrap_err();
            assert!(
                refused.message.contains("does not apply to carts in AUD"),
                "{code}"
            );
        }
    }

    /// Amounts past 64 bits are refused, never wrapped into a negative
    /// total (issue 44 item 10).
    #[test]
    fn a_total_past_the_largest_amount_is_refused() {
        use storefront_proto::common::v1::LineItem;
        let line = |cents: i64, quantity: u32| LineItem {
            quantity,
            unit_price: Some(money("AUD", cents)),
            ..Default::default()
        };
        let catalogue = Catalogue::new(Vec::new());
        for lines in [
            vec![line(i64::MAX / 2, 3)],
            vec![line(i64::MAX / 2, 1), line(i64::MAX / 2, 1), line(10, 1)],
        ] {
            let mut cart = Cart {
                currency_code: "AUD".into(),
                line_items: lines,
                ..Default::default()
            };
            let refused = reprice(&mut cart, &catalogue, 0).unwrap_err();
            assert_eq!(refused.kind, ErrorKind::Validation);
        }
        let most = storefront_proto::names::MAX_CENT_AMOUNT;
        let mut cart = Cart {
            currency_code: "AUD".into(),
            line_items: (0..100).map(|_| line(most, 99)).collect(),
            ..Default::default()
        };
        reprice(&mut cart, &catalogue, 0).expect("the largest bounded cart totals");
        assert_eq!(cart.total_price, Some(money("AUD", most * 99 * 100)));
    }

    proptest! {
        #[test]
        fn shares_sum_to_the_amount_and_fit_their_lines(
            weights in proptest::collection::vec(0i64..100_000, 1..12),
            per_mille in 0i64..=1000,
        ) {
            let total: i64 = weights.iter().sum();
            let amount = total * per_mille / 1000;
            let shares = distribute(amount, &weights);
            prop_assert_eq!(shares.iter().sum::<i64>(), amount.min(total).max(0));
            for (s, w) in shares.iter().zip(&weights) {
                prop_assert!(*s >= 0 && s <= w);
            }
        }
    }
}
